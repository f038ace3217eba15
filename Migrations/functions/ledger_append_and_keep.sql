-- ledger_append_committed with the requests' personal values kept in the same
-- transaction: a commitment costs no round trip of its own, and an append without values nothing.
CREATE OR REPLACE PROCEDURE ledger_append_and_keep(
    p_streams text[], p_expected int8[], p_states text[], p_counts int[],
    p_ids uuid[], p_types text[], p_data text[], p_metadata text[],
    p_value_requests int[], p_commitments text[], p_subjects text[], p_kinds text[], p_values text[], p_openings bytea[],
    INOUT outcomes text[] DEFAULT NULL, INOUT first_positions int8[] DEFAULT NULL,
    INOUT last_positions int8[] DEFAULT NULL, INOUT stream_versions int8[] DEFAULT NULL)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT array_agg(a.outcome ORDER BY a.request), array_agg(coalesce(a.first_position, -1) ORDER BY a.request),
           array_agg(coalesce(a.last_position, -1) ORDER BY a.request), array_agg(coalesce(a.stream_version, -1) ORDER BY a.request)
        INTO outcomes, first_positions, last_positions, stream_versions
        FROM ledger_append(p_streams, p_expected, p_states, p_counts, p_ids, p_types, p_data, p_metadata) AS a;
    IF cardinality(p_value_requests) > 0 THEN
        PERFORM ledger_keep_values(outcomes, p_value_requests, p_commitments, p_subjects, p_kinds, p_values, p_openings);
    END IF;
    COMMIT;
END;
$$;
