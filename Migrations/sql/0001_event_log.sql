-- The append-only event log: the only source of truth.
CREATE TABLE ledger_events (
    position     bigint      PRIMARY KEY,
    stream_id    text        NOT NULL,
    version      bigint      NOT NULL CHECK (version >= 1),
    event_id     uuid        NOT NULL UNIQUE,
    event_type   text        NOT NULL,
    -- json (not jsonb) keeps the exact bytes that the hash covers.
    data         json        NOT NULL,
    metadata     json        NOT NULL,
    recorded_at  timestamptz NOT NULL,
    hash         bytea       NOT NULL CHECK (octet_length(hash) = 32),
    UNIQUE (stream_id, version)
);

-- Current version of each stream, plus the writer's inline state snapshot (decisions are
-- taken on this, updated in the same transaction as the append).
CREATE TABLE ledger_streams (
    stream_id  text   PRIMARY KEY,
    version    bigint NOT NULL,
    state      json,
    position   bigint NOT NULL
);

-- The head of the log. Appenders lock this single row, which serialises commits in
-- position order: no reader can see position N+1 before N is visible.
CREATE TABLE ledger_head (
    id        boolean PRIMARY KEY DEFAULT true CHECK (id),
    position  bigint  NOT NULL,
    hash      bytea   NOT NULL
);
INSERT INTO ledger_head (id, position, hash) VALUES (true, 0, decode(repeat('00', 32), 'hex'));

-- Append-only, enforced by the database for every role.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger_events is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER ledger_events_no_update BEFORE UPDATE ON ledger_events
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_events_no_delete BEFORE DELETE ON ledger_events
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON ledger_events
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- The hash chain, computed by the database as the events are written. Must match
-- LedgerDomain.HashChain, which `ledger log verify` uses to walk the chain:
-- SHA256(previous || i64 position || str stream || i64 version || uuid || str type ||
--        str data || str metadata || i64 recorded_at_micros), str = u32 length + UTF-8.
CREATE FUNCTION ledger_str(value text) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT int4send(octet_length(value)) || convert_to(value, 'UTF8')
$$;

-- Appends a group of requests in one transaction, each at its own expected version.
-- Locking the head row first serialises appenders, so commit order is position order.
-- Arguments are parallel arrays per request (stream, expected version: -1 any, 0 no
-- stream, n exact; inline state or '' to keep it; number of events) and flat arrays of
-- events. One row per request: outcome 'ok' | 'duplicate' | 'conflict' | 'mismatch'.
-- Set-based: three lookups and two writes per group, whatever its size.
CREATE FUNCTION ledger_append(
    p_streams text[], p_expected int8[], p_states text[], p_counts int[],
    p_ids uuid[], p_types text[], p_data text[], p_metadata text[])
RETURNS TABLE (request int, outcome text, first_position int8, last_position int8, stream_version int8)
LANGUAGE plpgsql
-- Plan each lookup for its actual arguments: a generic plan cached while the log was small
-- would keep scanning sequentially as it grows.
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    head_pos int8;
    head_hash bytea;
    at timestamptz := date_trunc('microseconds', clock_timestamp());
    micros int8;
    offs int := 0;
    n int;
    i int;
    j int;
    k int;
    cur int8;
    slot int;
    first_pos int8;
    -- Streams touched by this group, with their running versions and states.
    s_names text[];
    s_versions int8[];
    s_states text[];
    s_positions int8[];
    -- Event ids of this group already stored (retries), with where they are.
    d_ids uuid[];
    d_streams text[];
    d_positions int8[];
    d_versions int8[];
    found int;
    found_here int;
    -- Rows to insert.
    r_positions int8[] := '{}';
    r_streams text[] := '{}';
    r_versions int8[] := '{}';
    r_hashes bytea[] := '{}';
    r_index int[] := '{}';
BEGIN
    micros := (extract(epoch FROM at) * 1000000)::int8;
    SELECT h.position, h.hash INTO head_pos, head_hash FROM ledger_head h FOR UPDATE;
    -- After the lock, each statement sees every append committed before ours.
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
            found := 0; found_here := 0;
            first_position := NULL;
            FOR j IN 1 .. n LOOP
                k := array_position(d_ids, p_ids[offs + j]);
                IF k IS NOT NULL THEN
                    found := found + 1;
                    IF d_streams[k] = p_streams[i] THEN
                        found_here := found_here + 1;
                        first_position := least(first_position, d_positions[k]);
                        last_position := greatest(last_position, d_positions[k]);
                        stream_version := greatest(stream_version, d_versions[k]);
                    END IF;
                END IF;
            END LOOP;
            outcome := CASE WHEN found_here = n THEN 'duplicate' ELSE 'mismatch' END;
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
            head_hash := sha256(
                head_hash || int8send(head_pos) || ledger_str(p_streams[i]) || int8send(cur + j)
                || uuid_send(p_ids[k]) || ledger_str(p_types[k]) || ledger_str(p_data[k])
                || ledger_str(p_metadata[k]) || int8send(micros));
            r_positions := r_positions || head_pos;
            r_streams := r_streams || p_streams[i];
            r_versions := r_versions || (cur + j);
            r_hashes := r_hashes || head_hash;
            r_index := r_index || k;
            -- Later requests in this group must see these ids as stored.
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
        UPDATE ledger_head SET position = head_pos, hash = head_hash;
        -- Delivered at commit only: wakes projectors and waiting readers.
        PERFORM pg_notify('ledger_events', head_pos::text);
    END IF;
END;
$$;
