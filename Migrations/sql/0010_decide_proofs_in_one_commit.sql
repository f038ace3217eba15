-- A group of proof submissions decided in one commit (ProofBatcher's one-commit path).
--
-- The batcher reads the collaborations' states and the challenges, verifies and decides in
-- Swift, then CALLs this: it consumes the challenges the decisions used, appends the
-- verdicts through ledger_append (the head lock, the hash chain, the NOTIFY), stores the
-- requests already decided, and commits before it answers. Every premise of the decisions
-- is checked again here, under the locks: a challenge that is no longer issued to that
-- account for that collaboration, unexpired and unused, or a collaboration whose version
-- moved, raises (SQLSTATE LP001, LP002) and nothing of the group is written; the batcher
-- then decides the group on the path that stores first (its requests were never stored).
--
-- Arguments: the requests (parallel arrays; p_consumes says whether the request's decision
-- used its challenge, p_appends/p_offsets where its verdict is among the appends' events),
-- then the appends as ledger_append takes them. Answers each append's first position.
CREATE PROCEDURE ledger_decide_proofs_committed(
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
        FROM unnest(p_request_ids, p_challenge_ids, p_accounts, p_collaborations, p_consumes)
             AS i(request_id, challenge_id, account, collaboration_id, consumes)
        WHERE i.consumes AND c.challenge_id = i.challenge_id AND c.account = i.account
          AND c.collaboration_id = i.collaboration_id AND c.expires_at >= now() AND c.used_by_request IS NULL;
    GET DIAGNOSTICS consumed = ROW_COUNT;
    IF consumed <> (SELECT count(*) FROM unnest(p_consumes) AS u(consumes) WHERE u.consumes) THEN
        RAISE EXCEPTION 'a challenge is no longer consumable' USING ERRCODE = 'LP001';
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
           ARRAY(SELECT decode(h, 'hex') FROM json_array_elements_text(i.hashes::json) WITH ORDINALITY AS e(h, n) ORDER BY n),
           i.status, NULLIF(i.reason, ''), NULLIF(i.root_hash, ''::bytea), first_positions[i.append] + i.offs, now()
    FROM unnest(p_request_ids, p_collaborations, p_accounts, p_challenge_ids, p_signatures, p_public_keys, p_public_key_indexes,
                p_hashes, p_statuses, p_reasons, p_root_hashes, p_appends, p_offsets)
         AS i(request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index,
              hashes, status, reason, root_hash, append, offs);
    COMMIT;
END;
$$;
