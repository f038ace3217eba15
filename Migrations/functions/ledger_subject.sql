-- The account's pseudonym, made on its first use (again after an erasure: a new subject).
CREATE OR REPLACE FUNCTION ledger_subject(p_account text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    found text;
BEGIN
    SELECT pseudonym INTO found FROM ledger_subjects WHERE account = p_account;
    IF found IS NOT NULL THEN
        RETURN found;
    END IF;
    INSERT INTO ledger_subjects (account, pseudonym) VALUES (p_account, 'psn-' || gen_random_uuid()::text)
        ON CONFLICT (account) DO NOTHING RETURNING pseudonym INTO found;
    RETURN coalesce(found, (SELECT pseudonym FROM ledger_subjects WHERE account = p_account));
END;
$$;
