-- The highlights projection: the highlights among the events in (p_from, p_to].
-- The range is read through the log's primary key, planned on every call: see
-- ledger_project_collaborations. A rebuild fills fresh copies of a projection's tables in
-- the schema ledger_rebuild while the live ones serve: its connections put that schema first on
-- the search path, so this same function writes there (hence no SET search_path).
CREATE OR REPLACE FUNCTION ledger_project_highlights(p_from int8, p_to int8) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    v_partitions int;
    v_held int[];
BEGIN
    SELECT partitions, held INTO v_partitions, v_held FROM ledger_held_partitions;
    INSERT INTO proj_highlights (position, collaboration_id, kind, trigger, mentioned_root_hash, account, at)
    SELECT e.position, ledger_stream_collaboration(e.stream_id), d.kind, d.trigger, d."mentionedRootHash", d.account, e.recorded_at
    FROM ledger_events e, json_to_record(e.data) AS d(kind text, trigger text, "mentionedRootHash" text, account text)
    WHERE e.position > p_from AND e.position <= p_to AND e.event_type = 'HighlightPosted'
      AND ledger_is_collaboration_stream(e.stream_id)
      AND (v_held IS NULL
           OR ledger_collaboration_partition(ledger_stream_collaboration(e.stream_id), v_partitions) = ANY (v_held));
END;
$$;
