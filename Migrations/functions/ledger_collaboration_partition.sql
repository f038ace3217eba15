-- The partition of a collaboration in a cluster of `p_partitions` (a power of two): PL/Proxy's,
-- hashtext(id) & (partitions - 1), the one `RUN ON hashtext(id)` picks. Swift's
-- `ShardMap.partition(of:)` is the same rule, tested equal (PartitionRuleTests). A plain SQL
-- expression, IMMUTABLE, so PostgreSQL inlines it where it is called: the projections' folds pay
-- nothing for the call. Named to sort before ledger_holds, which calls it.
CREATE OR REPLACE FUNCTION ledger_collaboration_partition(p_collaboration text, p_partitions int) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT hashtext(p_collaboration) & (p_partitions - 1)
$$;
