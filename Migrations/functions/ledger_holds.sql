-- Whether this shard holds the collaboration (ledger_held_partitions): its partition is PL/Proxy's,
-- hashtext(id) & (partitions - 1), the one `RUN ON hashtext(id)` picks and ShardMap computes.
CREATE OR REPLACE FUNCTION ledger_holds(p_collaboration text) RETURNS bool
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT (hashtext(p_collaboration) & (h.partitions - 1)) = ANY (h.held) FROM ledger_held_partitions h), true)
$$;
