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
-- stream, n exact; inline state or NULL; number of events) and flat arrays of events.
-- One row per request: outcome 'ok' | 'duplicate' | 'conflict' | 'mismatch'.
CREATE FUNCTION ledger_append(
    p_streams text[], p_expected int8[], p_states text[], p_counts int[],
    p_ids uuid[], p_types text[], p_data text[], p_metadata text[])
RETURNS TABLE (request int, outcome text, first_position int8, last_position int8, stream_version int8)
LANGUAGE plpgsql AS $$
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
    found_count int;
    found_streams int;
    e_first int8;
    e_last int8;
    e_version int8;
    first_pos int8;
    positions int8[];
    versions int8[];
    hashes bytea[];
BEGIN
    micros := (extract(epoch FROM at) * 1000000)::int8;
    SELECT h.position, h.hash INTO head_pos, head_hash FROM ledger_head h FOR UPDATE;
    FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
        n := p_counts[i];
        request := i;
        -- A retry: every id already stored in this stream. Answer as the first time.
        SELECT count(*), count(*) FILTER (WHERE e.stream_id = p_streams[i]), min(e.position), max(e.position), max(e.version)
            INTO found_count, found_streams, e_first, e_last, e_version
            FROM ledger_events e WHERE e.event_id = ANY (p_ids[offs + 1 : offs + n]);
        IF found_count > 0 THEN
            IF found_count = n AND found_streams = n THEN
                outcome := 'duplicate'; first_position := e_first; last_position := e_last; stream_version := e_version;
            ELSE
                outcome := 'mismatch'; first_position := NULL; last_position := NULL; stream_version := NULL;
            END IF;
            offs := offs + n;
            RETURN NEXT;
            CONTINUE;
        END IF;
        SELECT s.version INTO cur FROM ledger_streams s WHERE s.stream_id = p_streams[i];
        cur := coalesce(cur, 0);
        IF p_expected[i] >= 0 AND p_expected[i] <> cur THEN
            outcome := 'conflict'; first_position := NULL; last_position := NULL; stream_version := cur;
            offs := offs + n;
            RETURN NEXT;
            CONTINUE;
        END IF;
        first_pos := head_pos + 1;
        positions := '{}';
        versions := '{}';
        hashes := '{}';
        FOR j IN 1 .. n LOOP
            k := offs + j;
            head_pos := head_pos + 1;
            head_hash := sha256(
                head_hash || int8send(head_pos) || ledger_str(p_streams[i]) || int8send(cur + j)
                || uuid_send(p_ids[k]) || ledger_str(p_types[k]) || ledger_str(p_data[k])
                || ledger_str(p_metadata[k]) || int8send(micros));
            positions := positions || head_pos;
            versions := versions || (cur + j);
            hashes := hashes || head_hash;
        END LOOP;
        INSERT INTO ledger_events (position, stream_id, version, event_id, event_type, data, metadata, recorded_at, hash)
            SELECT x.position, p_streams[i], x.version, x.id, x.type, x.data::json, x.metadata::json, at, x.hash
            FROM unnest(positions, versions, p_ids[offs + 1 : offs + n], p_types[offs + 1 : offs + n],
                        p_data[offs + 1 : offs + n], p_metadata[offs + 1 : offs + n], hashes)
                AS x(position, version, id, type, data, metadata, hash);
        INSERT INTO ledger_streams AS s (stream_id, version, state, position)
            VALUES (p_streams[i], cur + n, NULLIF(p_states[i], '')::json, head_pos)
            ON CONFLICT (stream_id) DO UPDATE
                SET version = excluded.version, state = COALESCE(excluded.state, s.state), position = excluded.position;
        outcome := 'ok'; first_position := first_pos; last_position := head_pos; stream_version := cur + n;
        offs := offs + n;
        RETURN NEXT;
    END LOOP;
    UPDATE ledger_head SET position = head_pos, hash = head_hash;
    -- Delivered at commit only: wakes projectors and waiting readers.
    PERFORM pg_notify('ledger_events', head_pos::text);
END;
$$;
