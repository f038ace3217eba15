-- Time travel from the current members: an identity whose last change (proj_members.position)
-- is at or before the position stands there as it stands now; only the identities changed
-- after the position are folded from the access history, with the same rules as
-- ledger_fold_members. Folding every identity of the collaboration cost ~8 ms at the end of a
-- 10,000-event collaboration (5,668 history rows into 1,636 members, mostly building the
-- aggregates' arrays); the identities spanning a position are a small share of them.
--
-- Consistent in one statement: proj_members and proj_access_history are written in the same
-- transaction by the membership projection, and the position asked for is at or below its
-- checkpoint (the caller caps it at the views' position, or takes it from the history).
CREATE OR REPLACE FUNCTION ledger_members_at(p_collaboration text, p_position int8)
RETURNS TABLE (root_hash text, state text, account text, invited_at timestamptz, granted_at timestamptz)
LANGUAGE sql STABLE AS $$
    -- Materialized, so the history rows are hash-joined to it: the planner, expecting a few
    -- dozen history rows for one collaboration, looked each of the 5,668 up in proj_members
    -- (20 ms at the end of the large collaboration; 1.5 ms this way).
    WITH changed AS MATERIALIZED (
        SELECT c.root_hash FROM proj_members c WHERE c.collaboration_id = p_collaboration AND c.position > p_position
    )
    SELECT m.root_hash, m.state, m.account, m.invited_at, m.granted_at
    FROM proj_members m
    WHERE m.collaboration_id = p_collaboration AND m.position <= p_position AND m.state <> 'removed'
    UNION ALL
    SELECT a.root_hash, (ARRAY['invited', 'granted', 'removed'])[a.st[2]],
           CASE WHEN a.account_pos = a.gr[1] THEN substr(a.gr_account, 21) END,
           timestamptz 'epoch' + a.inv[2] * interval '1 microsecond',
           CASE WHEN a.gr[1] > coalesce(a.inv[1], 0) THEN timestamptz 'epoch' + a.gr[2] * interval '1 microsecond' END
    FROM (
        SELECT h.root_hash,
            max(ARRAY[h.position, CASE h.change WHEN 'invited' THEN 1 WHEN 'granted' THEN 2 ELSE 3 END])
                FILTER (WHERE h.change <> 'revoked') AS st,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'invited') AS inv,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'granted') AS gr,
            max((lpad(h.position::text, 20, '0') || coalesce(h.account, '')) COLLATE "C")
                FILTER (WHERE h.change = 'granted') AS gr_account,
            max(h.position) FILTER (WHERE h.change IN ('invited', 'granted', 'revoked')) AS account_pos
        FROM proj_access_history h JOIN changed USING (root_hash)
        WHERE h.collaboration_id = p_collaboration AND h.position <= p_position
        GROUP BY h.root_hash
    ) a
    WHERE a.st[2] <> 3
$$;
