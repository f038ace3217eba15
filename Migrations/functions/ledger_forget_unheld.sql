-- What a shard keeps beside its log of the collaborations it does not hold (ledger_holds), gone,
-- once a partition has moved (`ledger shards move`: the new shard is a copy of the old, so each
-- holds the other's past): the views' rows folded before the move (the projections fold only
-- what the shard holds from then on), and what would make a service act on a collaboration routed
-- elsewhere: an expiry due (its stream's next_due_at), challenges and proof requests, and webhooks
-- of one collaboration. The log keeps every event: it is append-only, and its tree is what
-- checkpoints and evidence cover.
CREATE OR REPLACE FUNCTION ledger_forget_unheld() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM ledger_held_partitions) THEN
        RETURN;
    END IF;
    DELETE FROM proj_collaborations WHERE NOT ledger_holds(collaboration_id);
    DELETE FROM proj_access_history WHERE NOT ledger_holds(collaboration_id);
    DELETE FROM proj_members WHERE NOT ledger_holds(collaboration_id);
    DELETE FROM proj_highlights WHERE NOT ledger_holds(collaboration_id);
    UPDATE ledger_streams SET next_due_at = NULL
    WHERE next_due_at IS NOT NULL AND ledger_is_collaboration_stream(stream_id)
      AND NOT ledger_holds(ledger_stream_collaboration(stream_id));
    DELETE FROM ledger_proof_requests WHERE NOT ledger_holds(collaboration_id);
    DELETE FROM ledger_challenges WHERE NOT ledger_holds(collaboration_id);
    DELETE FROM ledger_webhooks WHERE collaboration_id IS NOT NULL AND NOT ledger_holds(collaboration_id);
END;
$$;
