-- Membership, step 1: the range's membership events, appended to the access history.
-- Writes where the search path leads, as ledger_project_collaborations.
CREATE OR REPLACE FUNCTION ledger_project_access_history(p_from int8, p_to int8) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO proj_access_history (position, collaboration_id, root_hash, change, account, reason, actor, at)
    SELECT e.position, substr(e.stream_id, 15), d."rootHash",
           CASE e.event_type WHEN 'IdentityAdded' THEN 'invited' WHEN 'AccessGranted' THEN 'granted'
                             WHEN 'IdentityRemoved' THEN 'removed' ELSE 'revoked' END,
           CASE WHEN e.event_type = 'IdentityAdded' THEN NULL ELSE d.account END,
           d.reason, m.actor, e.recorded_at
    FROM ledger_events e,
         json_to_record(e.data) AS d("rootHash" text, account text, reason text),
         json_to_record(e.metadata) AS m(actor text)
    WHERE e.position > p_from AND e.position <= p_to
      AND e.event_type IN ('IdentityAdded', 'AccessGranted', 'IdentityRemoved', 'AccessRevoked')
      AND e.stream_id LIKE 'collaboration-%';
END;
$$;
