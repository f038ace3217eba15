-- One proof commit, whichever process decided the group (LedgerVerifier.ProofEngine): a
-- submission the API process decided, or a stored request a verifier worker decided.
-- The throttle lives here too, so the check and the record of a rejection are one step.
-- p_requests: one JSON object per request, in the group's order:
--   {"id", "collaboration", "account", "challenge", "consumes" (its decision used its challenge),
--    "stored" (a stored request, still pending), "signature", "publicKey" (base64), "index",
--    "hashes" ([base64]), "status", "reason", "rootHash" (base64 or null),
--    "append" (which append, from 1), "offset" (its verdict's place in that append)}
-- then the verdicts as ledger_append takes them. With the head locked first (every append waits
-- there, so the counts see every committed rejection):
--   * throttle: an account whose rejections in the window, this group's included, pass the
--     limit is named in `throttled`, with how many more it may have recorded (`allowed`) and
--     the seconds until its oldest leaves the window, and nothing is written: the engine answers
--     the account's rejections past `allowed` 429 and commits the rest;
--   * each request's subject (its account's pseudonym in ledger_subjects) must still be there
--     (else LP004);
--   * each challenge a decision used must still be unused and unexpired (else LP001);
--   * the verdicts are appended at the versions read (else LP002), each grant inside its window
--     at the time it is recorded (else LP005);
--   * fresh requests are stored decided; stored ones must still be pending (else LP003), and
--     their waiters are told (NOTIFY ledger_proof_verdicts).
-- Any raise writes nothing; the engine reads and decides again. Answers after the commit.
-- (The services may not lock the head row themselves: ledger_lock_head runs as the owner.)
CREATE OR REPLACE PROCEDURE ledger_commit_proofs(
    p_requests json, p_rejection_limit int, p_window interval,
    p_streams text[], p_expected int8[], p_states text[], p_counts int[],
    p_ids uuid[], p_types text[], p_data text[], p_metadata text[],
    INOUT first_positions int8[] DEFAULT NULL, INOUT throttled text[] DEFAULT NULL, INOUT allowed int[] DEFAULT NULL,
    INOUT retry_after int DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    consumed int;
    refused int;
    decided int;
    written_from int8;
    written_to int8;
BEGIN
    PERFORM ledger_lock_head();

    SELECT array_agg(t.account), array_agg(t.allowed), max(t.retry) INTO throttled, allowed, retry_after
    FROM (
        SELECT g.account, greatest(0, p_rejection_limit - w.n)::int AS allowed,
               greatest(1, ceil(extract(epoch FROM coalesce(w.oldest + p_window - now(), interval '1 second'))))::int AS retry
        FROM (SELECT r.account, count(*) AS n FROM json_to_recordset(p_requests) AS r(account text, status text)
              WHERE r.status = 'rejected' GROUP BY r.account) g
        CROSS JOIN LATERAL (
            SELECT count(*) AS n, min(e.recorded_at) AS oldest FROM ledger_events e
            WHERE e.event_type = 'ProofRejected' AND e.data->>'account' = g.account AND e.recorded_at > now() - p_window) w
        WHERE w.n + g.n > p_rejection_limit) t;
    IF throttled IS NOT NULL THEN
        COMMIT;
        RETURN;
    END IF;

    -- Each request's subject still there (LP004): one erased since the read is made anew.
    IF EXISTS (SELECT 1 FROM json_to_recordset(p_requests) AS r(account text)
               WHERE NOT EXISTS (SELECT 1 FROM ledger_subjects s WHERE s.pseudonym = r.account)) THEN
        RAISE EXCEPTION 'a subject was erased since it was read' USING ERRCODE = 'LP004';
    END IF;

    UPDATE ledger_challenges c SET used_by_request = r.id
        FROM json_to_recordset(p_requests) AS r(id uuid, challenge uuid, consumes boolean)
        WHERE r.consumes AND c.challenge_id = r.challenge AND c.used_by_request IS NULL AND c.expires_at >= now();
    GET DIAGNOSTICS consumed = ROW_COUNT;
    IF consumed <> (SELECT count(*) FROM json_to_recordset(p_requests) AS r(consumes boolean) WHERE r.consumes) THEN
        RAISE EXCEPTION 'a challenge was used or expired since it was read' USING ERRCODE = 'LP001';
    END IF;

    SELECT count(*) FILTER (WHERE a.outcome <> 'ok'), array_agg(a.first_position ORDER BY a.request),
           min(a.first_position), max(a.last_position)
        INTO refused, first_positions, written_from, written_to
        FROM ledger_append(p_streams, p_expected, p_states, p_counts, p_ids, p_types, p_data, p_metadata) AS a;
    IF refused > 0 THEN
        RAISE EXCEPTION 'a collaboration changed since it was read' USING ERRCODE = 'LP002';
    END IF;
    -- Each grant inside its window at the time it is recorded, on this database's clock (SPEC
    -- "One clock"): one decided before its window ended but recorded after (LP005) is decided again.
    -- Only the positions just written are read, by the primary key: an open-ended range had the
    -- planner scan the whole log on every commit.
    IF EXISTS (SELECT 1 FROM ledger_events e
               WHERE e.position BETWEEN written_from AND written_to AND e.event_type = 'AccessGranted'
                 AND (e.recorded_at >= (e.data->>'notAfter')::timestamptz OR e.recorded_at < (e.data->>'notBefore')::timestamptz)) THEN
        RAISE EXCEPTION 'a grant would be recorded outside its window' USING ERRCODE = 'LP005';
    END IF;

    WITH r AS (
        SELECT r.*, first_positions[r.append] + r."offset" AS position
        FROM json_to_recordset(p_requests) AS r(
            id uuid, collaboration text, account text, challenge uuid, stored boolean, signature text, "publicKey" text,
            index int8, hashes json, status text, reason text, "rootHash" text, append int, "offset" int)
    ), fresh AS (
        INSERT INTO ledger_proof_requests
            (request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes,
             status, reason, root_hash, decided_position, decided_at)
        SELECT r.id, r.collaboration, r.account, r.challenge, decode(r.signature, 'base64'), decode(r."publicKey", 'base64'),
               r.index, ARRAY(SELECT decode(h, 'base64') FROM json_array_elements_text(r.hashes) WITH ORDINALITY AS e(h, n) ORDER BY n),
               r.status, r.reason, decode(r."rootHash", 'base64'), r.position, now()
        FROM r WHERE NOT r.stored
    ), stored AS (
        UPDATE ledger_proof_requests q
        SET status = r.status, reason = r.reason, root_hash = decode(r."rootHash", 'base64'), decided_position = r.position,
            decided_at = now()
        FROM r WHERE r.stored AND q.request_id = r.id AND q.status = 'pending'
        RETURNING q.request_id
    )
    SELECT count(*) INTO decided FROM (SELECT pg_notify('ledger_proof_verdicts', stored.request_id::text) FROM stored) n;
    IF decided <> (SELECT count(*) FROM json_to_recordset(p_requests) AS r(stored boolean) WHERE r.stored) THEN
        RAISE EXCEPTION 'a stored request was decided since it was read' USING ERRCODE = 'LP003';
    END IF;
    COMMIT;
END;
$$;
