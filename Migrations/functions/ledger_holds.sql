-- Whether this shard holds the collaboration: where ledger_held_partitions has its row, when the
-- collaboration's partition (ledger_collaboration_partition) is one it holds; elsewhere, always.
CREATE OR REPLACE FUNCTION ledger_holds(p_collaboration text) RETURNS bool
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT ledger_collaboration_partition(p_collaboration, h.partitions) = ANY (h.held)
                      FROM ledger_held_partitions h), true)
$$;
