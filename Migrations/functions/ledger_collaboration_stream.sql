-- A collaboration's stream: `collaboration-<id>`, as Swift's `Streams.collaboration(_:)` names it
-- (tested equal, CollaborationStreamRuleTests); ledger_is_collaboration_stream tests for the same
-- prefix and ledger_stream_collaboration reads the id after it. The prefix is a literal in each,
-- not read from here: a call with constant arguments is run when the calling statement is
-- planned, and the projections' statements are planned at every step. A plain SQL expression,
-- IMMUTABLE, so PostgreSQL inlines it: `stream_id = ledger_collaboration_stream(id)` is served by
-- the (stream_id, version) index as the expression written out is.
CREATE OR REPLACE FUNCTION ledger_collaboration_stream(p_collaboration text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT 'collaboration-' || p_collaboration
$$;
