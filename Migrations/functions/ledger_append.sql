-- Appends a group of requests in one transaction, each at its own expected version.
-- Locking the head row first serialises appenders, so commit order is position order; the
-- events' time is taken under that lock, never below the previous append's (the head keeps it),
-- so times rise along the log (docs/TRUST.md, "Members at a time").
-- Arguments are parallel arrays per request (stream, expected version: -1 any, 0 no
-- stream, n exact; inline state or '' to keep it; number of events) and flat arrays of
-- events. One row per request: outcome 'ok' | 'duplicate' | 'conflict' | 'mismatch'.
-- Set-based: three lookups and two writes per group, whatever its size. An event's hash is
-- sha256(previous hash || ledger_leaf(...)), as LedgerDomain.EventLeaf and HashChain compute it
-- (a store test compares the two).
-- Each lookup is planned for its actual arguments: a generic plan cached while the log was small
-- would keep scanning sequentially as it grows.
-- Runs with the owner's rights (the services may not write the log themselves), on this schema
-- whatever the caller's path.
CREATE OR REPLACE FUNCTION ledger_append(
    p_streams text[], p_expected int8[], p_states text[], p_counts int[],
    p_ids uuid[], p_types text[], p_data text[], p_metadata text[])
RETURNS TABLE (request int, outcome text, first_position int8, last_position int8, stream_version int8)
LANGUAGE plpgsql
SET plan_cache_mode = force_custom_plan
SECURITY DEFINER SET search_path FROM CURRENT
AS $$
DECLARE
    head_pos int8;
    head_hash bytea;
    at timestamptz;
    offs int := 0;
    n int;
    i int;
    j int;
    k int;
    cur int8;
    slot int;
    first_pos int8;
    s_names text[];
    s_versions int8[];
    s_states text[];
    s_positions int8[];
    d_ids uuid[];
    d_streams text[];
    d_positions int8[];
    d_versions int8[];
    found_here int;
    r_positions int8[] := '{}';
    r_streams text[] := '{}';
    r_versions int8[] := '{}';
    r_hashes bytea[] := '{}';
    r_index int[] := '{}';
BEGIN
    SELECT h.position, h.hash, h.recorded_at INTO head_pos, head_hash, at FROM ledger_head h FOR UPDATE;
    -- The clock read once the lock is held: in the locking statement itself it is read as the
    -- row is scanned, before the wait.
    at := greatest(date_trunc('microseconds', clock_timestamp()), at);
    SELECT coalesce(array_agg(s.stream_id), '{}'), coalesce(array_agg(s.version), '{}'),
           coalesce(array_agg(coalesce(s.state::text, '')), '{}'), coalesce(array_agg(s.position), '{}')
        INTO s_names, s_versions, s_states, s_positions
        FROM ledger_streams s WHERE s.stream_id = ANY (p_streams);
    SELECT coalesce(array_agg(e.event_id), '{}'), coalesce(array_agg(e.stream_id), '{}'),
           coalesce(array_agg(e.position), '{}'), coalesce(array_agg(e.version), '{}')
        INTO d_ids, d_streams, d_positions, d_versions
        FROM ledger_events e WHERE e.event_id = ANY (p_ids);

    FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
        n := p_counts[i];
        request := i;
        first_position := NULL; last_position := NULL; stream_version := NULL;
        -- A retry: every id already stored in this stream. Answer as the first time.
        IF p_ids[offs + 1 : offs + n] && d_ids THEN
            found_here := 0;
            FOR j IN 1 .. n LOOP
                k := array_position(d_ids, p_ids[offs + j]);
                IF k IS NOT NULL AND d_streams[k] = p_streams[i] THEN
                    found_here := found_here + 1;
                    first_position := least(first_position, d_positions[k]);
                    last_position := greatest(last_position, d_positions[k]);
                    stream_version := greatest(stream_version, d_versions[k]);
                END IF;
            END LOOP;
            -- Some of them stored, on a stream that has moved past the version this request read:
            -- another writer decided first with the same derived ids (the expiry service and a
            -- command's catch-up); a conflict, read and decided again. At that version: a mismatch.
            slot := array_position(s_names, p_streams[i]);
            cur := CASE WHEN slot IS NULL THEN 0 ELSE s_versions[slot] END;
            outcome := CASE WHEN found_here = n THEN 'duplicate'
                            WHEN p_expected[i] >= 0 AND p_expected[i] <> cur THEN 'conflict' ELSE 'mismatch' END;
            IF outcome = 'conflict' THEN
                first_position := NULL; last_position := NULL; stream_version := cur;
            END IF;
            offs := offs + n;
            RETURN NEXT;
            CONTINUE;
        END IF;
        slot := array_position(s_names, p_streams[i]);
        cur := CASE WHEN slot IS NULL THEN 0 ELSE s_versions[slot] END;
        IF p_expected[i] >= 0 AND p_expected[i] <> cur THEN
            outcome := 'conflict'; stream_version := cur;
            offs := offs + n;
            RETURN NEXT;
            CONTINUE;
        END IF;
        first_pos := head_pos + 1;
        FOR j IN 1 .. n LOOP
            k := offs + j;
            head_pos := head_pos + 1;
            head_hash := sha256(head_hash || ledger_leaf(
                head_pos, p_streams[i], cur + j, p_ids[k], p_types[k], p_data[k], p_metadata[k], at));
            r_positions := r_positions || head_pos;
            r_streams := r_streams || p_streams[i];
            r_versions := r_versions || (cur + j);
            r_hashes := r_hashes || head_hash;
            r_index := r_index || k;
            d_ids := d_ids || p_ids[k];
            d_streams := d_streams || p_streams[i];
            d_positions := d_positions || head_pos;
            d_versions := d_versions || (cur + j);
        END LOOP;
        IF slot IS NULL THEN
            s_names := s_names || p_streams[i];
            s_versions := s_versions || (cur + n);
            s_states := s_states || p_states[i];
            s_positions := s_positions || head_pos;
        ELSE
            s_versions[slot] := cur + n;
            s_states[slot] := CASE WHEN p_states[i] = '' THEN s_states[slot] ELSE p_states[i] END;
            s_positions[slot] := head_pos;
        END IF;
        outcome := 'ok'; first_position := first_pos; last_position := head_pos; stream_version := cur + n;
        offs := offs + n;
        RETURN NEXT;
    END LOOP;

    IF array_length(r_positions, 1) > 0 THEN
        INSERT INTO ledger_events (position, stream_id, version, event_id, event_type, data, metadata, recorded_at, hash)
            SELECT x.position, x.stream, x.version, p_ids[x.k], p_types[x.k], p_data[x.k]::json, p_metadata[x.k]::json, at, x.hash
            FROM unnest(r_positions, r_streams, r_versions, r_hashes, r_index) AS x(position, stream, version, hash, k);
        INSERT INTO ledger_streams AS s (stream_id, version, state, position)
            SELECT x.name, x.version, NULLIF(x.state, '')::json, x.position
            FROM unnest(s_names, s_versions, s_states, s_positions) AS x(name, version, state, position)
            WHERE x.name = ANY (r_streams)
            ON CONFLICT (stream_id) DO UPDATE
                SET version = excluded.version, state = COALESCE(excluded.state, s.state), position = excluded.position;
        UPDATE ledger_head SET position = head_pos, hash = head_hash, recorded_at = at;
        PERFORM pg_notify('ledger_events', head_pos::text);
    END IF;
END;
$$;
