-- Whether `p_stream_id` is a collaboration's stream: it begins with `collaboration-`, the prefix
-- of ledger_collaboration_stream (each tested against Swift's `Streams`). The test of
-- ledger_stream_collaboration, on its own for a WHERE clause that reads no id: a projection's
-- fold tests every event of its range, and reads the id only of those it keeps. Written as
-- `left() =` rather than LIKE or starts_with, so that no index serves it once inlined (see
-- ledger_project_collaborations).
CREATE OR REPLACE FUNCTION ledger_is_collaboration_stream(p_stream_id text) RETURNS bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT left(p_stream_id, 14) = 'collaboration-'
$$;
