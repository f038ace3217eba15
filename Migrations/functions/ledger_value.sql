-- Reads show a value: a commitment's plaintext, NULL once erased, or a plaintext value of an
-- event before the format, as it is. Free of subqueries, so it is inlined into the reads; the
-- lookup runs only for commitments, in ledger_committed_value.
CREATE OR REPLACE FUNCTION ledger_value(p_value text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_value LIKE 'commitment:%' THEN ledger_committed_value(p_value) ELSE p_value END
$$;
