-- Two proof paths (the grouped path in the API process, the worker path), the rules in the
-- domain (LedgerDomain's IssuedChallenge and ProofVerdict).
--
-- The process that stored a group's requests before deciding them claimed them
-- (0006_proof_claims); that storing path is gone, and so is the claim.
ALTER TABLE ledger_proof_requests DROP COLUMN claimed_until;

-- The grouped path's commit (ProofBatcher). The batcher read the collaborations and the
-- challenges and decided in Swift; this consumes the challenges the decisions used, appends
-- the verdicts through ledger_append (the head lock, the hash chain, the NOTIFY), stores the
-- requests already decided, and commits before it answers.
--
-- It does not decide again. Under its locks it re-checks only what may have changed since the
-- read: each challenge still unused and unexpired (LP001), each collaboration still at the
-- version read (LP002, from ledger_append's expected versions). Either raises, and nothing of
-- the group is written; the batcher then reads and decides again.
--
-- Arguments: the requests (parallel arrays; p_consumes says whether the request's decision
-- used its challenge, p_hashes holds its inclusion path as a JSON array of base64 strings,
-- p_appends/p_offsets where its verdict is among the appends' events), then the appends as
-- ledger_append takes them. Answers each append's first position.
CREATE OR REPLACE PROCEDURE ledger_decide_proofs_committed(
    p_request_ids uuid[], p_collaborations text[], p_accounts text[], p_challenge_ids uuid[], p_consumes boolean[],
    p_signatures bytea[], p_public_keys bytea[], p_public_key_indexes int8[], p_hashes text[],
    p_statuses text[], p_reasons text[], p_root_hashes bytea[], p_appends int[], p_offsets int[],
    p_streams text[], p_expected int8[], p_states text[], p_counts int[],
    p_ids uuid[], p_types text[], p_data text[], p_metadata text[],
    INOUT first_positions int8[] DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    consumed int;
    refused int;
BEGIN
    UPDATE ledger_challenges c SET used_by_request = i.request_id
        FROM unnest(p_request_ids, p_challenge_ids, p_consumes) AS i(request_id, challenge_id, consumes)
        WHERE i.consumes AND c.challenge_id = i.challenge_id AND c.used_by_request IS NULL AND c.expires_at >= now();
    GET DIAGNOSTICS consumed = ROW_COUNT;
    IF consumed <> (SELECT count(*) FROM unnest(p_consumes) AS u(consumes) WHERE u.consumes) THEN
        RAISE EXCEPTION 'a challenge was used or expired since it was read' USING ERRCODE = 'LP001';
    END IF;

    SELECT count(*) FILTER (WHERE a.outcome <> 'ok'), array_agg(a.first_position ORDER BY a.request)
        INTO refused, first_positions
        FROM ledger_append(p_streams, p_expected, p_states, p_counts, p_ids, p_types, p_data, p_metadata) AS a;
    IF refused > 0 THEN
        RAISE EXCEPTION 'a collaboration changed since it was read' USING ERRCODE = 'LP002';
    END IF;

    INSERT INTO ledger_proof_requests
        (request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes,
         status, reason, root_hash, decided_position, decided_at)
    SELECT i.request_id, i.collaboration_id, i.account, i.challenge_id, i.signature, i.public_key, i.public_key_index,
           ARRAY(SELECT decode(h, 'base64') FROM json_array_elements_text(i.hashes::json) WITH ORDINALITY AS e(h, n) ORDER BY n),
           i.status, NULLIF(i.reason, ''), NULLIF(i.root_hash, ''::bytea), first_positions[i.append] + i.offs, now()
    FROM unnest(p_request_ids, p_collaborations, p_accounts, p_challenge_ids, p_signatures, p_public_keys, p_public_key_indexes,
                p_hashes, p_statuses, p_reasons, p_root_hashes, p_appends, p_offsets)
         AS i(request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index,
              hashes, status, reason, root_hash, append, offs);
    COMMIT;
END;
$$;
