-- A commitment's plaintext, NULL once erased (ledger_value calls it for commitments only).
-- PL/pgSQL, whose plan is kept for the session, as ledger_subject_account.
CREATE OR REPLACE FUNCTION ledger_committed_value(p_commitment text) RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT v.value FROM ledger_personal_values v WHERE v.commitment = p_commitment);
END;
$$;
