-- The process that receives proof submissions decides them in groups (ProofBatcher): it
-- stores each group's requests claimed until a few seconds ahead, and verifier workers leave
-- claimed requests alone until the claim lapses (a process that died with requests in hand).
ALTER TABLE ledger_proof_requests ADD COLUMN claimed_until timestamptz;
