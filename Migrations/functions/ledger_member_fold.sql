-- The member fold, written once: each identity of a collaboration after root hash `p_after`, in
-- root hash order, as it stood at position `p_position`, folded from its access history. The
-- state is the last of invited/granted/removed/expired (a revocation or a window change leaves it
-- as it was); a re-invitation clears the grant and removal before it; the account is the last
-- grant's unless an invitation or revocation came after it (an expiry keeps it: the account that
-- held access until then); the window (not_before, not_after) is that of the last invitation or
-- window change, either bound NULL for none. The state is by the events only: readers that
-- answer as of a time make an invited or granted identity whose window ended by then 'expired'
-- (ledger_member_state).
-- Each "last X" is max([position, value...]) (positions are unique, so the first element
-- decides). The members page, the projection (the identities a batch touched) and a rebuild
-- (every collaboration) read it; inlined by the planner, it is one range scan of
-- proj_access_history_identity, folded as it streams by (a page stops after its last identity).
-- `p_after_position` also folds `p_after`'s own history after that position (the rows its stored
-- member has not seen, read by one seek of the index: ledger_fold_touched_members joins the two);
-- `account_position` and `window_position` say whether an identity's rows hold an invitation,
-- grant or revocation (which decide the account) or an invitation or window change (which decide
-- the window); NULL: none.
CREATE OR REPLACE FUNCTION ledger_member_fold(
    p_collaboration text, p_after text, p_position int8, p_after_position int8 DEFAULT 9223372036854775807)
RETURNS TABLE (root_hash text, state text, account text, invited_at timestamptz, invited_position int8,
               granted_at timestamptz, granted_position int8, removed_at timestamptz, removed_position int8, last_position int8,
               not_before timestamptz, not_after timestamptz, account_position int8, window_position int8)
LANGUAGE sql STABLE AS $$
    SELECT a.root_hash, (ARRAY['invited', 'granted', 'removed', 'expired'])[a.st[2]],
           CASE WHEN a.account_pos = a.gr[1] THEN substr(a.gr_account, 21) END,
           timestamptz 'epoch' + a.inv[2] * interval '1 microsecond', a.inv[1],
           CASE WHEN a.gr[1] > coalesce(a.inv[1], 0) THEN timestamptz 'epoch' + a.gr[2] * interval '1 microsecond' END,
           CASE WHEN a.gr[1] > coalesce(a.inv[1], 0) THEN a.gr[1] END,
           CASE WHEN a.rm[1] > coalesce(a.inv[1], 0) THEN timestamptz 'epoch' + a.rm[2] * interval '1 microsecond' END,
           CASE WHEN a.rm[1] > coalesce(a.inv[1], 0) THEN a.rm[1] END,
           a.last_pos,
           -- Whole seconds apart: a bound may be any time of years 1 to 9999, further from the epoch
           -- than a float8 count of microseconds holds exactly.
           timestamptz 'epoch' + (a.win[2] / 1000000) * interval '1 second' + (a.win[2] % 1000000) * interval '1 microsecond',
           timestamptz 'epoch' + (a.win[3] / 1000000) * interval '1 second' + (a.win[3] % 1000000) * interval '1 microsecond',
           a.account_pos, a.win[1]
    FROM (
        SELECT h.root_hash,
            max(ARRAY[h.position, CASE h.change WHEN 'invited' THEN 1 WHEN 'granted' THEN 2 WHEN 'removed' THEN 3 ELSE 4 END])
                FILTER (WHERE h.change NOT IN ('revoked', 'window')) AS st,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'invited') AS inv,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'granted') AS gr,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'removed') AS rm,
            -- The window of the last invitation or window change (NULL elements: no bound).
            max(ARRAY[h.position, (extract(epoch FROM h.not_before) * 1000000)::int8,
                      (extract(epoch FROM h.not_after) * 1000000)::int8])
                FILTER (WHERE h.change IN ('invited', 'window')) AS win,
            -- The last grant's account, behind its zero-padded position.
            max((lpad(h.position::text, 20, '0') || coalesce(h.account, '')) COLLATE "C") FILTER (WHERE h.change = 'granted')
                AS gr_account,
            max(h.position) FILTER (WHERE h.change IN ('invited', 'granted', 'revoked')) AS account_pos,
            max(h.position) AS last_pos
        FROM proj_access_history h
        WHERE h.collaboration_id = p_collaboration AND (h.root_hash, h.position) > (p_after, p_after_position) AND h.position <= p_position
        GROUP BY h.root_hash
    ) a
$$;
