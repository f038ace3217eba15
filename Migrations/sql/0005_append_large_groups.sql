-- Large groups (hundreds of events appended at once) spent most of ledger_append's time in
-- PL/pgSQL's per-event loop: hashing and array bookkeeping, tens of microseconds an event.
-- For them the store splits the append into two calls inside one transaction:
--   ledger_append_plan locks the head and decides each request (a conflict, or the positions
--   and versions it gets), returning the head's hash and the commit time;
--   the store computes the hash chain from there (LedgerDomain.HashChain, the code
--   `ledger log verify` walks the chain with);
--   ledger_append_write inserts the events with those hashes, set-based, and moves the head.
-- A retry (a request whose first event id is stored already) makes the plan raise
-- unique_violation, and so does the insert for any other event id stored twice; the store
-- then sends the group through ledger_append, which answers retries and mismatches.

CREATE FUNCTION ledger_append_plan(p_streams text[], p_expected int8[], p_counts int[], p_first_ids uuid[])
RETURNS TABLE (request int, outcome text, first_position int8, first_version int8, head_hash bytea, at_micros int8)
LANGUAGE plpgsql
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    head_pos int8;
    -- Same instant as ledger_append takes: before the head lock.
    at timestamptz := date_trunc('microseconds', clock_timestamp());
    s_names text[];
    s_versions int8[];
    slot int;
    cur int8;
BEGIN
    SELECT h.position, h.hash INTO head_pos, head_hash FROM ledger_head h FOR UPDATE;
    IF EXISTS (SELECT 1 FROM ledger_events e WHERE e.event_id = ANY (p_first_ids)) THEN
        RAISE EXCEPTION 'a retried append: use ledger_append' USING ERRCODE = 'unique_violation';
    END IF;
    SELECT coalesce(array_agg(s.stream_id), '{}'), coalesce(array_agg(s.version), '{}')
        INTO s_names, s_versions
        FROM ledger_streams s WHERE s.stream_id = ANY (p_streams);
    at_micros := (extract(epoch FROM at) * 1000000)::int8;
    FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
        request := i;
        slot := array_position(s_names, p_streams[i]);
        cur := CASE WHEN slot IS NULL THEN 0 ELSE s_versions[slot] END;
        IF p_expected[i] >= 0 AND p_expected[i] <> cur THEN
            -- first_version: the stream's current version, for the conflict's message.
            outcome := 'conflict'; first_position := NULL; first_version := cur;
        ELSE
            outcome := 'ok'; first_position := head_pos + 1; first_version := cur + 1;
            head_pos := head_pos + p_counts[i];
            IF slot IS NULL THEN
                s_names := s_names || p_streams[i];
                s_versions := s_versions || (cur + p_counts[i]);
            ELSE
                s_versions[slot] := cur + p_counts[i];
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
END;
$$;

-- Events in position order (contiguous from the head, as planned), the streams' new
-- versions, states ('' keeps the stored one) and last positions.
CREATE FUNCTION ledger_append_write(
    p_positions int8[], p_streams text[], p_versions int8[], p_ids uuid[], p_types text[], p_data text[],
    p_metadata text[], p_hashes bytea[], p_at_micros int8,
    s_names text[], s_versions int8[], s_states text[], s_positions int8[])
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    n int := cardinality(p_positions);
BEGIN
    -- The head must be where the plan left it (same transaction, still locked): a check, not a race.
    UPDATE ledger_head SET position = p_positions[n], hash = p_hashes[n] WHERE position = p_positions[1] - 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'ledger_append_write: the head is not at position %', p_positions[1] - 1;
    END IF;
    INSERT INTO ledger_events (position, stream_id, version, event_id, event_type, data, metadata, recorded_at, hash)
        SELECT x.position, x.stream, x.version, x.id, x.type, x.data::json, x.metadata::json,
               timestamptz 'epoch' + p_at_micros * interval '1 microsecond', x.hash
        FROM unnest(p_positions, p_streams, p_versions, p_ids, p_types, p_data, p_metadata, p_hashes)
            AS x(position, stream, version, id, type, data, metadata, hash);
    INSERT INTO ledger_streams AS s (stream_id, version, state, position)
        SELECT x.name, x.version, NULLIF(x.state, '')::json, x.position
        FROM unnest(s_names, s_versions, s_states, s_positions) AS x(name, version, state, position)
        ON CONFLICT (stream_id) DO UPDATE
            SET version = excluded.version, state = COALESCE(excluded.state, s.state), position = excluded.position;
    PERFORM pg_notify('ledger_events', p_positions[n]::text);
END;
$$;
