-- ledger_append, committed before it answers. Run in autocommit, a statement's result reaches
-- the client before the commit (at Sync), so a crash in between would lose an append already
-- answered; wrapping it in BEGIN/COMMIT costs two more round trips per group. A procedure can
-- COMMIT itself: CALL answers only once the commit is done (or its error). One row: the
-- per-request outcomes as arrays, in request order (-1 for no position or version).
CREATE OR REPLACE PROCEDURE ledger_append_committed(
    p_streams text[], p_expected int8[], p_states text[], p_counts int[],
    p_ids uuid[], p_types text[], p_data text[], p_metadata text[],
    INOUT outcomes text[] DEFAULT NULL, INOUT first_positions int8[] DEFAULT NULL,
    INOUT last_positions int8[] DEFAULT NULL, INOUT stream_versions int8[] DEFAULT NULL)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT array_agg(a.outcome ORDER BY a.request), array_agg(coalesce(a.first_position, -1) ORDER BY a.request),
           array_agg(coalesce(a.last_position, -1) ORDER BY a.request), array_agg(coalesce(a.stream_version, -1) ORDER BY a.request)
        INTO outcomes, first_positions, last_positions, stream_versions
        FROM ledger_append(p_streams, p_expected, p_states, p_counts, p_ids, p_types, p_data, p_metadata) AS a;
    COMMIT;
END;
$$;
