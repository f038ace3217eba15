-- The collaborations projection: the starts among the events in (p_from, p_to].
-- The range is read through the log's primary key, whatever the statistics say: the stream test is
-- written so no index serves it (a LIKE prefix is served by the (stream_id, version) index, which
-- plans made from the statistics of a small log chose, reading every collaboration event of the
-- log at each step: 3-5 ms a step at 130k events, growing with the log; docs/BENCHMARKS.md), and
-- the statement is planned for its range on every call (a generic plan cached for the session
-- while the log was small could scan it sequentially for good). A rebuild fills fresh copies of a projection's tables in
-- the schema ledger_rebuild while the live ones serve: its connections put that schema first on
-- the search path, so this same function writes there (hence no SET search_path). On a shard a
-- partition moved to or from, the log holds the other shard's past too: only what the shard holds
-- is folded, here, in the access history (and so the members) and the highlights. The test is
-- ledger_holds's with the held partitions read once: it costs nothing where the shard holds
-- everything (NULL, planned away), where ledger_holds would be called for every event (its
-- subquery keeps it from being inlined). The stream test (ledger_is_collaboration_stream), the
-- stream's collaboration and its partition are functions of their own, inlined: each rule lives
-- once, and the folds pay nothing for the calls.
CREATE OR REPLACE FUNCTION ledger_project_collaborations(p_from int8, p_to int8) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    v_partitions int;
    v_held int[];
BEGIN
    SELECT partitions, held INTO v_partitions, v_held FROM ledger_held_partitions;
    INSERT INTO proj_collaborations (collaboration_id, local_identifier, title, initiator_handle, initiator_name, owner,
                                     universal_link, share_options, started_at, started_position)
    SELECT d."collaborationId", d."localIdentifier", d.title, d."initiatorHandle", d."initiatorName", d.owner,
           d."universalLink", d."shareOptions", e.recorded_at, e.position
    FROM ledger_events e,
         json_to_record(e.data) AS d("collaborationId" text, "localIdentifier" text, title text, "initiatorHandle" text,
                                     "initiatorName" text, owner text, "universalLink" text, "shareOptions" json)
    WHERE e.position > p_from AND e.position <= p_to AND e.event_type = 'CollaborationStarted'
      AND ledger_is_collaboration_stream(e.stream_id)
      AND (v_held IS NULL
           OR ledger_collaboration_partition(ledger_stream_collaboration(e.stream_id), v_partitions) = ANY (v_held));
END;
$$;
