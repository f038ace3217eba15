-- Proof requests of erased accounts (issue 37). A stored request whose account's subject was
-- erased before its verdict can have no verdict event: ledger_commit_proofs refuses a subject that
-- is gone (LP004), and that raise failed the request's whole group on every attempt and every
-- sweep, so the verifier queue stalled behind it. The engine now reads which subjects are gone and
-- settles their requests on their own (LedgerVerifier.ProofEngine.refuseErased): decided without
-- an event, as 'refused' with the reason 'account_erased', which the submitter's poll shows. The
-- log's record of it is the erasure (PersonalDataErased); no event names the subject after it.
ALTER TABLE ledger_proof_requests DROP CONSTRAINT ledger_proof_requests_status_check;
ALTER TABLE ledger_proof_requests ADD CONSTRAINT ledger_proof_requests_status_check
    CHECK (status IN ('pending', 'granted', 'rejected', 'throttled', 'refused'));

-- Requests stalled so before this migration are settled now, their waiters told (at the commit).
WITH refused AS (
    UPDATE ledger_proof_requests q SET status = 'refused', reason = 'account_erased', decided_at = now()
    WHERE q.status = 'pending' AND NOT EXISTS (SELECT 1 FROM ledger_subjects s WHERE s.pseudonym = q.account)
    RETURNING q.request_id)
SELECT count(*) FROM (SELECT pg_notify('ledger_proof_verdicts', r.request_id::text) FROM refused r) n;
