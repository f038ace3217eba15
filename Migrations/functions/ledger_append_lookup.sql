-- ledger_append's two lookups, before it decides a group: the streams it appends to (version,
-- inline state, last position) and the event ids already stored (a retry), each as arrays.
-- Planned for their actual arguments on every call (force_custom_plan): a generic plan cached
-- while the log was small would keep scanning both tables sequentially as they grow (0009).
-- Only these two statements need it; ledger_append's own statements and expressions keep their
-- cached plans (planning them on every call had been a third of a single-event append).
-- VOLATILE (the default), so each lookup takes a snapshot after ledger_append's head lock and
-- sees the group committed before it.
CREATE OR REPLACE FUNCTION ledger_append_lookup(
    p_streams text[], p_ids uuid[],
    OUT s_names text[], OUT s_versions int8[], OUT s_states text[], OUT s_positions int8[],
    OUT d_ids uuid[], OUT d_streams text[], OUT d_positions int8[], OUT d_versions int8[])
LANGUAGE plpgsql
SET plan_cache_mode = force_custom_plan
AS $$
BEGIN
    SELECT coalesce(array_agg(s.stream_id), '{}'), coalesce(array_agg(s.version), '{}'),
           coalesce(array_agg(coalesce(s.state::text, '')), '{}'), coalesce(array_agg(s.position), '{}')
        INTO s_names, s_versions, s_states, s_positions
        FROM ledger_streams s WHERE s.stream_id = ANY (p_streams);
    SELECT coalesce(array_agg(e.event_id), '{}'), coalesce(array_agg(e.stream_id), '{}'),
           coalesce(array_agg(e.position), '{}'), coalesce(array_agg(e.version), '{}')
        INTO d_ids, d_streams, d_positions, d_versions
        FROM ledger_events e WHERE e.event_id = ANY (p_ids);
END;
$$;
