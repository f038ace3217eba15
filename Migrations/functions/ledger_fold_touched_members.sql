-- Membership, step 2: every identity the range (p_from, p_to] touched, its stored member row
-- joined with the history it has not seen (after the row's position; all of it for a new
-- identity): the fold's first identity from (root hash, position) is it, read by one seek of the
-- identity index (or nothing new: then nothing is written). Index scans only: a planner that
-- takes a large collaboration in a small table for a third of it otherwise scans and sorts the
-- table for every identity (seen: 2 s for 3,000 identities, 34 ms this way).
--
-- Why joined, not folded from the start: an identity granted again and again (a recipient's
-- every proof) made every later step fold its whole history, a step's cost growing with it
-- (docs/BENCHMARKS.md). The join is the fold's own rule, each "last X" the later of the two parts
-- (every new row comes after every row the member has seen):
--   * state, invitation, window: the new part's if it has one, else the member's;
--   * grant and removal: shown when after the last invitation. The new part decides them when
--     it holds an invitation or one of them (ledger_member_fold shows them against its own
--     invitation); else the member's stand, hidden ones included: a grant the member row hides
--     came before the member's invitation, which stays the last one;
--   * account: the new part's when it holds an invitation, grant or revocation, else the member's.
-- A rebuild folds the whole history (ledger_fold_all_members); ProjectionTests compare the two
-- column by column.
--
-- One generic plan (plan_cache_mode): with the index scans forced above, the plan is the same for
-- any range, and planning it again for each call's range was most of a small step's cost: a step
-- of one event took 0.8-1.8 ms here, 0.07-0.17 ms on the generic plan, and a range of 16,604
-- identities' rows 120-153 ms either way (psql on a bench database, docs/BENCHMARKS.md).
CREATE OR REPLACE FUNCTION ledger_fold_touched_members(p_from int8, p_to int8) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET enable_sort = off SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO proj_members AS m (collaboration_id, root_hash, state, account, invited_at, invited_position,
                                   granted_at, granted_position, removed_at, removed_position, position,
                                   not_before, not_after)
    SELECT c.collaboration_id, f.root_hash, coalesce(f.state, o.state),
           CASE WHEN f.account_position IS NULL THEN o.account ELSE f.account END,
           CASE WHEN f.invited_position IS NULL THEN o.invited_at ELSE f.invited_at END,
           coalesce(f.invited_position, o.invited_position),
           CASE WHEN f.invited_position IS NULL AND f.granted_position IS NULL THEN o.granted_at ELSE f.granted_at END,
           CASE WHEN f.invited_position IS NULL AND f.granted_position IS NULL THEN o.granted_position ELSE f.granted_position END,
           CASE WHEN f.invited_position IS NULL AND f.removed_position IS NULL THEN o.removed_at ELSE f.removed_at END,
           CASE WHEN f.invited_position IS NULL AND f.removed_position IS NULL THEN o.removed_position ELSE f.removed_position END,
           f.last_position,
           CASE WHEN f.window_position IS NULL THEN o.not_before ELSE f.not_before END,
           CASE WHEN f.window_position IS NULL THEN o.not_after ELSE f.not_after END
    FROM (SELECT DISTINCT collaboration_id, root_hash FROM proj_access_history WHERE position > p_from AND position <= p_to) c
    -- In lateral subqueries: the member is one lookup of its key for each identity (never a hash
    -- join over the whole table), and the fold's arguments stay plain columns, so the planner
    -- inlines it.
    LEFT JOIN LATERAL (
        SELECT * FROM proj_members p WHERE p.collaboration_id = c.collaboration_id AND p.root_hash = c.root_hash) o ON true
    CROSS JOIN LATERAL (
        SELECT * FROM ledger_member_fold(c.collaboration_id, c.root_hash, p_to, coalesce(o.position, 0)) f
        ORDER BY f.root_hash LIMIT 1) f
    WHERE f.root_hash = c.root_hash
    ON CONFLICT (collaboration_id, root_hash) DO UPDATE SET
        state = excluded.state, account = excluded.account, invited_at = excluded.invited_at,
        invited_position = excluded.invited_position, granted_at = excluded.granted_at,
        granted_position = excluded.granted_position, removed_at = excluded.removed_at,
        removed_position = excluded.removed_position, position = excluded.position,
        not_before = excluded.not_before, not_after = excluded.not_after;
END;
$$;
