-- Time travel: ledger_members_at as PL/pgSQL, the same fold as 0004's. A SQL function is
-- inlined into every calling query and planned again with it (~2 ms per asOf query here);
-- a PL/pgSQL function's query keeps its plan for the life of the connection, and the pool
-- keeps connections.
CREATE OR REPLACE FUNCTION ledger_members_at(p_collaboration text, p_position int8)
RETURNS TABLE (root_hash text, state text, account text, invited_at timestamptz, granted_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
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
        FROM proj_access_history h
        WHERE h.collaboration_id = p_collaboration AND h.position <= p_position
        GROUP BY h.root_hash
    ) a
    WHERE a.st[2] <> 3
    ORDER BY a.root_hash;
END;
$$;
