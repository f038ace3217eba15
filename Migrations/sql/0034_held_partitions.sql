-- The partitions a shard holds once a partition has moved to another shard (docs/SCALING.md,
-- "Adding a shard"): a shard made by copying another holds both logs' past, and the partitions it
-- holds say which of their collaborations are its own. `ledger shards move` writes the row; no row
-- (one database, or a shard nothing has moved from or to) holds every collaboration.
CREATE TABLE ledger_held_partitions (
    only_row    bool  PRIMARY KEY DEFAULT true CHECK (only_row),
    -- The cluster's partition count (a power of two), and the partitions this shard holds.
    partitions  int   NOT NULL CHECK (partitions > 0 AND partitions & (partitions - 1) = 0),
    held        int[] NOT NULL,
    -- The shard this one was made a copy of by a move (its connection string as the cluster's
    -- partitions name it), NULL for one that was not: a feed cursor from before the move gives this
    -- shard that shard's position (docs/SCALING.md).
    copied_from text
);
GRANT SELECT ON ledger_held_partitions TO ledger_service;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ledger_held_partitions FROM ledger_service;
