-- Membership, step 2: every identity the range (p_from, p_to] touched, folded again from its
-- whole history up to p_to: one step of the identity index finds the root hash before it, and
-- the fold's first identity from there is it. Index scans only: a planner that takes a large
-- collaboration in a small table for a third of it otherwise scans and sorts the table for
-- every identity (seen: 2 s for 3,000 identities, 34 ms this way).
CREATE OR REPLACE FUNCTION ledger_fold_touched_members(p_from int8, p_to int8) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET enable_sort = off AS $$
BEGIN
    INSERT INTO proj_members AS m (collaboration_id, root_hash, state, account, invited_at, invited_position,
                                   granted_at, granted_position, removed_at, removed_position, position,
                                   not_before, not_after)
    SELECT c.collaboration_id, f.*
    FROM (SELECT DISTINCT collaboration_id, root_hash FROM proj_access_history WHERE position > p_from AND position <= p_to) c
    -- In lateral subqueries, so the fold's arguments stay plain columns and the planner inlines it.
    CROSS JOIN LATERAL (
        SELECT coalesce(max(p.root_hash), '') AS before FROM proj_access_history p
        WHERE p.collaboration_id = c.collaboration_id AND p.root_hash < c.root_hash) b
    CROSS JOIN LATERAL (
        SELECT * FROM ledger_member_fold(c.collaboration_id, b.before, p_to) f ORDER BY f.root_hash LIMIT 1) f
    ON CONFLICT (collaboration_id, root_hash) DO UPDATE SET
        state = excluded.state, account = excluded.account, invited_at = excluded.invited_at,
        invited_position = excluded.invited_position, granted_at = excluded.granted_at,
        granted_position = excluded.granted_position, removed_at = excluded.removed_at,
        removed_position = excluded.removed_position, position = excluded.position,
        not_before = excluded.not_before, not_after = excluded.not_after;
END;
$$;
