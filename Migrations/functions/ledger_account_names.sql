-- The names an account goes by in the views.
-- A caller is matched to events through its own pseudonym only (SPEC "The pseudonym namespace is
-- reserved"). Its raw account counts only on a log that holds events from before pseudonyms
-- (ledger_privacy_format), where those events name it in plaintext; and a name in the
-- pseudonyms' namespace (psn-, erased:, any case) matches nothing, even if authentication,
-- which refuses such accounts with 401 reserved_account, were bypassed.
CREATE OR REPLACE FUNCTION ledger_account_names(p_account text) RETURNS text[] LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF lower(left(p_account, 4)) = 'psn-' OR lower(left(p_account, 7)) = 'erased:' THEN
        RETURN '{}'::text[];
    END IF;
    RETURN array_remove(ARRAY[
        CASE WHEN (SELECT f.pseudonyms_from FROM ledger_privacy_format f) > 1 THEN p_account END,
        (SELECT s.pseudonym FROM ledger_subjects s WHERE s.account = p_account)], NULL);
END;
$$;
