-- Append-only, enforced by the database for every role: the triggers of ledger_events,
-- ledger_tree_nodes, ledger_checkpoints and ledger_published_checkpoints refuse any UPDATE,
-- DELETE or TRUNCATE with it.
CREATE OR REPLACE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
