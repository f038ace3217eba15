-- The proof-rejection throttle, shared by every API instance of the database.
--
-- Rejections are counted where they already are, in the log: an account's ProofRejected
-- events of the last window, found through this partial index (only rejections are in it, so
-- other appends do not pay for it).
CREATE INDEX ledger_events_rejections ON ledger_events ((data->>'account'), recorded_at)
    WHERE event_type = 'ProofRejected';

-- A submission being decided holds a claim (its id is the proof request's): it may become a
-- rejection that the log does not show yet. Counting live claims too makes the check and the
-- record one atomic step per account: a burst of concurrent submissions cannot all pass a
-- count taken before any of them was rejected. A claim is spent once its request is decided
-- (a decided row in ledger_proof_requests: a rejection is then in the log, counted there), so
-- the common path costs one statement; one whose decision failed is deleted by the API, and
-- one left by a process that died is ignored after `p_claim_life` and deleted later.
-- Unlogged: claims live for one submission, a crash may lose them all (the count is then the
-- log's alone), and writing no WAL spares each claim a commit flush. No index: it holds the
-- submissions in flight, a few pages that every claim scans, and whose deleted rows a scan
-- prunes from the page; an index would keep an entry for every claim ever made until vacuum,
-- and each claim's scan of it would walk them.
CREATE UNLOGGED TABLE ledger_throttle_claims (
    id          uuid        NOT NULL,
    account     text        NOT NULL,
    claimed_at  timestamptz NOT NULL DEFAULT now()
);

-- Claims a slot for submission `p_claim` of `p_account`, or refuses: allowed is false once the
-- account's rejections in the last `p_window` plus its live claims reach `p_limit`, and
-- retry_after is then the seconds until the oldest of those rejections leaves the window. One
-- account's claims are serialised by a transaction-scoped advisory lock.
CREATE FUNCTION ledger_claim_proof_slot(p_account text, p_limit int, p_window interval, p_claim_life interval, p_claim uuid)
RETURNS TABLE (allowed boolean, retry_after int)
LANGUAGE plpgsql AS $$
DECLARE
    v_rejections int;
    v_oldest timestamptz;
    v_claims int := 0;
    v_claim record;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('ledger_throttle:' || p_account, 0));
    -- The account's live claims; spent and lapsed ones go. One lookup of the request per claim
    -- (a join, planned generically, hashed the whole requests table on every call).
    FOR v_claim IN SELECT id, claimed_at FROM ledger_throttle_claims WHERE account = p_account LOOP
        IF v_claim.claimed_at < now() - p_claim_life
           OR EXISTS (SELECT 1 FROM ledger_proof_requests WHERE request_id = v_claim.id AND status <> 'pending') THEN
            DELETE FROM ledger_throttle_claims WHERE id = v_claim.id;
        ELSE
            v_claims := v_claims + 1;
        END IF;
    END LOOP;
    IF random() < 0.001 THEN
        DELETE FROM ledger_throttle_claims WHERE claimed_at < now() - p_claim_life;  -- accounts that left
    END IF;
    SELECT count(*), min(recorded_at) INTO v_rejections, v_oldest
    FROM ledger_events
    WHERE event_type = 'ProofRejected' AND data->>'account' = p_account AND recorded_at > now() - p_window;
    IF v_rejections + v_claims >= p_limit THEN
        RETURN QUERY SELECT false,
            greatest(1, ceil(extract(epoch FROM coalesce(v_oldest + p_window - now(), interval '1 second'))))::int;
        RETURN;
    END IF;
    INSERT INTO ledger_throttle_claims (id, account) VALUES (p_claim, p_account);
    RETURN QUERY SELECT true, 0;
END;
$$;
