-- The second of a large group's two calls (ledger_append_plan is the first, in the same
-- transaction). Events in position order (contiguous from the head, as planned), the streams' new
-- versions, states ('' keeps the stored one) and last positions.
-- Runs with the owner's rights (the services may not write the log themselves), on this schema
-- whatever the caller's path.
CREATE OR REPLACE FUNCTION ledger_append_write(
    p_positions int8[], p_streams text[], p_versions int8[], p_ids uuid[], p_types text[], p_data text[],
    p_metadata text[], p_hashes bytea[], p_at_micros int8,
    s_names text[], s_versions int8[], s_states text[], s_positions int8[])
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path FROM CURRENT
AS $$
DECLARE
    n int := cardinality(p_positions);
BEGIN
    -- The head must be where the plan left it (same transaction, still locked): a check, not a race.
    -- Its time no earlier than the head's: times rise along the log.
    UPDATE ledger_head SET position = p_positions[n], hash = p_hashes[n],
        recorded_at = timestamptz 'epoch' + p_at_micros * interval '1 microsecond'
        WHERE position = p_positions[1] - 1 AND recorded_at <= timestamptz 'epoch' + p_at_micros * interval '1 microsecond';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'ledger_append_write: the head is not at position %, or its time is later than the group''s', p_positions[1] - 1;
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
