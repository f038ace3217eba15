-- The verifiable index's prefix tree (docs/TRUST.md, "The verifiable index"; LedgerIndexStore):
-- its nodes by position, and how much of the log they cover. Written only by the folder
-- (`IndexFolder`), nodes and covered size in one transaction, so no commit leaves nodes without
-- the size they cover. Unlike the log's own tables these are updated in place (a key's leaf and
-- the parents on its path change with every event naming it), never deleted from: a position,
-- once it holds a node, holds one for good (`IndexNodeStore`).

-- A node at its position: depth 0 … 256 and the first `depth` bits of its keys, in
-- (depth + 7) / 8 bytes, the bits past `depth` zero (`NodePosition`). A leaf holds its key hash
-- (`leaf_key`) and the key's value (`digest`); a parent holds no key and its hash (`digest`).
-- Fill factor 80: an update leaves the row on its page (a HOT update) where there is room, so
-- rewriting a path does not add to the primary key's index.
CREATE TABLE ledger_index_nodes (
    depth    int2  NOT NULL CHECK (depth BETWEEN 0 AND 256),
    prefix   bytea NOT NULL CHECK (octet_length(prefix) = (depth + 7) / 8),
    leaf_key bytea CHECK (octet_length(leaf_key) = 32),
    digest   bytea NOT NULL CHECK (octet_length(digest) = 32),
    PRIMARY KEY (depth, prefix),
    -- A parent at depth 256 would have no children.
    CHECK (leaf_key IS NOT NULL OR depth < 256)
) WITH (fillfactor = 80);

-- What the nodes cover: the log's positions 1 … log_size, whose index root is `root` (32 zero
-- bytes for the empty index). One row, always there; the folder locks it for the length of a
-- batch (FOR UPDATE SKIP LOCKED), so one folder writes at a time and another finds it busy.
CREATE TABLE ledger_index_state (
    only_row bool  PRIMARY KEY DEFAULT true CHECK (only_row),
    log_size int8  NOT NULL CHECK (log_size >= 0),
    root     bytea NOT NULL CHECK (octet_length(root) = 32)
);
INSERT INTO ledger_index_state (log_size, root) VALUES (0, decode(repeat('00', 32), 'hex'));

-- The services' login folds the log into the index: nodes are inserted and updated, the one
-- state row updated; nothing is ever deleted.
GRANT SELECT, INSERT, UPDATE ON ledger_index_nodes TO ledger_service;
REVOKE DELETE, TRUNCATE ON ledger_index_nodes FROM ledger_service;
GRANT SELECT, UPDATE ON ledger_index_state TO ledger_service;
REVOKE INSERT, DELETE, TRUNCATE ON ledger_index_state FROM ledger_service;
