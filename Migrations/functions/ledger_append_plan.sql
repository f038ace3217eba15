-- Large groups (hundreds of events appended at once) spent most of ledger_append's time in
-- PL/pgSQL's per-event loop: hashing and array bookkeeping, tens of microseconds an event.
-- For them the store splits the append into two calls inside one transaction:
--   ledger_append_plan locks the head and decides each request (a conflict, or the positions
--   and versions it gets), returning the head's hash and the commit time;
--   the store computes the hash chain from there (LedgerDomain.HashChain, the code
--   `ledger log verify` walks the chain with);
--   ledger_append_write inserts the events with those hashes, set-based, and moves the head.
-- A retry (a request whose first event id is stored already) makes the plan raise
-- unique_violation, and so does the insert for any other event id stored twice; the store
-- then sends the group through ledger_append, which answers retries and mismatches.
-- Runs with the owner's rights (the services may not write the log themselves), on this schema
-- whatever the caller's path.
CREATE OR REPLACE FUNCTION ledger_append_plan(p_streams text[], p_expected int8[], p_counts int[], p_first_ids uuid[])
RETURNS TABLE (request int, outcome text, first_position int8, first_version int8, head_hash bytea, at_micros int8)
LANGUAGE plpgsql
SET plan_cache_mode = force_custom_plan
SECURITY DEFINER SET search_path FROM CURRENT
AS $$
DECLARE
    head_pos int8;
    -- As ledger_append takes it: under the head lock, never below the previous append's.
    at timestamptz;
    s_names text[];
    s_versions int8[];
    slot int;
    cur int8;
BEGIN
    SELECT h.position, h.hash, h.recorded_at INTO head_pos, head_hash, at FROM ledger_head h FOR UPDATE;
    -- The clock read once the lock is held: in the locking statement itself it is read as the
    -- row is scanned, before the wait.
    at := greatest(date_trunc('microseconds', clock_timestamp()), at);
    IF EXISTS (SELECT 1 FROM ledger_events e WHERE e.event_id = ANY (p_first_ids)) THEN
        RAISE EXCEPTION 'a retried append: use ledger_append' USING ERRCODE = 'unique_violation';
    END IF;
    SELECT coalesce(array_agg(s.stream_id), '{}'), coalesce(array_agg(s.version), '{}')
        INTO s_names, s_versions
        FROM ledger_streams s WHERE s.stream_id = ANY (p_streams);
    at_micros := (extract(epoch FROM at) * 1000000)::int8;
    FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
        request := i;
        slot := array_position(s_names, p_streams[i]);
        cur := CASE WHEN slot IS NULL THEN 0 ELSE s_versions[slot] END;
        IF p_expected[i] >= 0 AND p_expected[i] <> cur THEN
            -- first_version: the stream's current version, for the conflict's message.
            outcome := 'conflict'; first_position := NULL; first_version := cur;
        ELSE
            outcome := 'ok'; first_position := head_pos + 1; first_version := cur + 1;
            head_pos := head_pos + p_counts[i];
            IF slot IS NULL THEN
                s_names := s_names || p_streams[i];
                s_versions := s_versions || (cur + p_counts[i]);
            ELSE
                s_versions[slot] := cur + p_counts[i];
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
END;
$$;
