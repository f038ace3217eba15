-- The collaboration whose stream `p_stream_id` is: the id after the prefix `collaboration-`
-- (ledger_is_collaboration_stream), NULL for any other stream (the top log's, the privacy
-- office's). Swift's `Streams.collaborationId(of:)` is the same rule, tested equal
-- (CollaborationStreamRuleTests). A plain SQL expression, IMMUTABLE, so PostgreSQL inlines it,
-- and the test it calls, where it is called: a projection's fold pays nothing for the calls.
CREATE OR REPLACE FUNCTION ledger_stream_collaboration(p_stream_id text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN ledger_is_collaboration_stream(p_stream_id) THEN substr(p_stream_id, 15) END
$$;
