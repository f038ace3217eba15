-- Locks the head row for ledger_commit_proofs: the services that call it may not lock the row
-- themselves, so this runs with the owner's rights, on this schema whatever the caller's path.
CREATE OR REPLACE FUNCTION ledger_lock_head() RETURNS void LANGUAGE sql
SECURITY DEFINER SET search_path FROM CURRENT
AS $$
    SELECT FROM ledger_head FOR UPDATE
$$;
