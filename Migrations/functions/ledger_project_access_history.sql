-- Membership, step 1: the range's membership events, appended to the access history.
-- Writes where the search path leads, as ledger_project_collaborations.
-- An invitation and a window change carry the identity's window (absent bounds: NULL); an expiry
-- its `dueAt` as not_after, and the account that held access through the identity, if any.
-- The actor is read with ->> rather than a second json_to_record: a fifth of the statement's
-- time in a rebuild (measured on 1M events; docs/BENCHMARKS.md). The range is read through the
-- log's primary key, planned on every call: see ledger_project_collaborations.
CREATE OR REPLACE FUNCTION ledger_project_access_history(p_from int8, p_to int8) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    v_partitions int;
    v_held int[];
BEGIN
    SELECT partitions, held INTO v_partitions, v_held FROM ledger_held_partitions;
    INSERT INTO proj_access_history (position, collaboration_id, root_hash, change, account, reason, actor, at,
                                     not_before, not_after)
    SELECT e.position, ledger_stream_collaboration(e.stream_id), d."rootHash", c.change,
           CASE WHEN c.change IN ('invited', 'window') THEN NULL ELSE d.account END,
           d.reason, e.metadata->>'actor', e.recorded_at,
           CASE WHEN c.change IN ('invited', 'window') THEN d."notBefore"::timestamptz END,
           CASE WHEN c.change IN ('invited', 'window') THEN d."notAfter"::timestamptz
                WHEN c.change = 'expired' THEN d."dueAt"::timestamptz END
    FROM ledger_events e,
         json_to_record(e.data) AS d("rootHash" text, account text, reason text, "notBefore" text, "notAfter" text,
                                     "dueAt" text),
         LATERAL (SELECT CASE e.event_type WHEN 'IdentityAdded' THEN 'invited' WHEN 'AccessGranted' THEN 'granted'
                                           WHEN 'IdentityRemoved' THEN 'removed' WHEN 'AccessRevoked' THEN 'revoked'
                                           WHEN 'AccessWindowChanged' THEN 'window' ELSE 'expired' END AS change) c
    WHERE e.position > p_from AND e.position <= p_to
      AND e.event_type IN ('IdentityAdded', 'AccessGranted', 'IdentityRemoved', 'AccessRevoked', 'AccessWindowChanged',
                           'AccessExpired')
      AND ledger_is_collaboration_stream(e.stream_id)
      AND (v_held IS NULL
           OR ledger_collaboration_partition(ledger_stream_collaboration(e.stream_id), v_partitions) = ANY (v_held));
END;
$$;
