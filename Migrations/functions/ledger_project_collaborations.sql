-- The collaborations projection: the starts among the events in (p_from, p_to].
-- Static SQL, planned once per session. A rebuild fills fresh copies of a projection's tables in
-- the schema ledger_rebuild while the live ones serve: its connections put that schema first on
-- the search path, so this same function writes there (hence no SET search_path).
CREATE OR REPLACE FUNCTION ledger_project_collaborations(p_from int8, p_to int8) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO proj_collaborations (collaboration_id, local_identifier, title, initiator_handle, initiator_name, owner,
                                     universal_link, share_options, started_at, started_position)
    SELECT d."collaborationId", d."localIdentifier", d.title, d."initiatorHandle", d."initiatorName", d.owner,
           d."universalLink", d."shareOptions", e.recorded_at, e.position
    FROM ledger_events e,
         json_to_record(e.data) AS d("collaborationId" text, "localIdentifier" text, title text, "initiatorHandle" text,
                                     "initiatorName" text, owner text, "universalLink" text, "shareOptions" json)
    WHERE e.position > p_from AND e.position <= p_to AND e.event_type = 'CollaborationStarted'
      AND e.stream_id LIKE 'collaboration-%';
END;
$$;
