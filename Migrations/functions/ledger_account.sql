-- Reads show an account: a live subject's, `erased:<pseudonym>` once erased, or a plaintext
-- account of an event before the format, as it is. Free of subqueries, so it is inlined into the
-- reads; the lookup runs only for pseudonyms, in ledger_subject_account.
CREATE OR REPLACE FUNCTION ledger_account(p_account text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_account LIKE 'psn-%' THEN ledger_subject_account(p_account) ELSE p_account END
$$;
