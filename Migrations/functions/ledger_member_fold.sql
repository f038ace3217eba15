-- The member fold, written once: each identity of a collaboration after root hash `p_after`, in
-- root hash order, as it stood at position `p_position`, folded from its access history. The
-- state is the last of invited/granted/removed; a re-invitation clears the grant and removal
-- before it; the account is the last grant's unless an invitation or revocation came after it.
-- Each "last X" is max([position, value]) (positions are unique). The members page, the
-- projection (the identities a batch touched) and a rebuild (every collaboration) read it;
-- inlined by the planner, it is one range scan of proj_access_history_identity, folded as it
-- streams by (a page stops after its last identity).
CREATE OR REPLACE FUNCTION ledger_member_fold(p_collaboration text, p_after text, p_position int8)
RETURNS TABLE (root_hash text, state text, account text, invited_at timestamptz, invited_position int8,
               granted_at timestamptz, granted_position int8, removed_at timestamptz, removed_position int8, last_position int8)
LANGUAGE sql STABLE AS $$
    SELECT a.root_hash, (ARRAY['invited', 'granted', 'removed'])[a.st[2]],
           CASE WHEN a.account_pos = a.gr[1] THEN substr(a.gr_account, 21) END,
           timestamptz 'epoch' + a.inv[2] * interval '1 microsecond', a.inv[1],
           CASE WHEN a.gr[1] > coalesce(a.inv[1], 0) THEN timestamptz 'epoch' + a.gr[2] * interval '1 microsecond' END,
           CASE WHEN a.gr[1] > coalesce(a.inv[1], 0) THEN a.gr[1] END,
           CASE WHEN a.rm[1] > coalesce(a.inv[1], 0) THEN timestamptz 'epoch' + a.rm[2] * interval '1 microsecond' END,
           CASE WHEN a.rm[1] > coalesce(a.inv[1], 0) THEN a.rm[1] END,
           a.last_pos
    FROM (
        SELECT h.root_hash,
            max(ARRAY[h.position, CASE h.change WHEN 'invited' THEN 1 WHEN 'granted' THEN 2 ELSE 3 END])
                FILTER (WHERE h.change <> 'revoked') AS st,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'invited') AS inv,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'granted') AS gr,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'removed') AS rm,
            -- The last grant's account, behind its zero-padded position.
            max((lpad(h.position::text, 20, '0') || coalesce(h.account, '')) COLLATE "C") FILTER (WHERE h.change = 'granted')
                AS gr_account,
            max(h.position) FILTER (WHERE h.change IN ('invited', 'granted', 'revoked')) AS account_pos,
            max(h.position) AS last_pos
        FROM proj_access_history h
        WHERE h.collaboration_id = p_collaboration AND h.root_hash > p_after AND h.position <= p_position
        GROUP BY h.root_hash
    ) a
$$;
