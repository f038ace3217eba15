-- A rebuild's fold of the whole history onto an empty members table, part `p_part` of
-- `p_parts` of the collaborations (run every part, on as many connections); index scans only,
-- as in ledger_fold_touched_members.
CREATE OR REPLACE FUNCTION ledger_fold_all_members(p_to int8, p_part int, p_parts int) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET enable_sort = off AS $$
BEGIN
    INSERT INTO proj_members (collaboration_id, root_hash, state, account, invited_at, invited_position,
                              granted_at, granted_position, removed_at, removed_position, position,
                              not_before, not_after)
    SELECT c.collaboration_id, f.root_hash, f.state, f.account, f.invited_at, f.invited_position, f.granted_at,
           f.granted_position, f.removed_at, f.removed_position, f.last_position, f.not_before, f.not_after
    FROM (SELECT DISTINCT collaboration_id FROM proj_access_history
          WHERE p_parts = 1 OR abs(hashtext(collaboration_id) % p_parts) = p_part) c
    CROSS JOIN LATERAL ledger_member_fold(c.collaboration_id, '', p_to) f;
END;
$$;
