-- Index revisions kept, and the lists they prove (docs/TRUST.md, "The verifiable index";
-- LedgerIndexStore). A lookup proves a key against a recorded revision that a witnessed
-- checkpoint covers, seldom the newest tree, so the nodes of every kept revision stay readable:
-- a node is now a row per position and revision that wrote it, read as the newest at or below
-- the revision asked. The index is a function of the log alone: 0035's tree, kept in place and
-- without its lists, is dropped here and folded again from position 1 by the folder.

DROP TABLE ledger_index_nodes;

-- A node at its position (0035: depth 0 … 256 and the first `depth` bits of its keys), written
-- by the fold through `log_size`, the first after the kept size (`ledger_index_state.kept_size`)
-- to write it. Later folds rewrite it in place (its key untouched: a HOT update, fill factor 80)
-- until a revision at or past them is kept; after that a fold adds a new row. So the rows at or
-- below a kept size never change, and a kept revision reads, at each position, the row with the
-- largest `log_size` at or below it. A leaf holds its key hash (`leaf_key`) and the key's value
-- (`digest`); a parent its hash.
CREATE TABLE ledger_index_nodes (
    depth    int2  NOT NULL CHECK (depth BETWEEN 0 AND 256),
    prefix   bytea NOT NULL CHECK (octet_length(prefix) = (depth + 7) / 8),
    log_size int8  NOT NULL CHECK (log_size >= 1),
    leaf_key bytea CHECK (octet_length(leaf_key) = 32),
    digest   bytea NOT NULL CHECK (octet_length(digest) = 32),
    PRIMARY KEY (depth, prefix, log_size),
    -- A parent at depth 256 would have no children.
    CHECK (leaf_key IS NOT NULL OR depth < 256)
) WITH (fillfactor = 80);

-- The newest revision whose nodes are kept: the recorder sets it to log_size, under the state
-- row's lock, before it records that revision in the log.
UPDATE ledger_index_state SET log_size = 0, root = decode(repeat('00', 32), 'hex');
ALTER TABLE ledger_index_state ADD COLUMN kept_size int8 NOT NULL DEFAULT 0 CHECK (kept_size >= 0);
ALTER TABLE ledger_index_state ADD CHECK (kept_size <= log_size);

-- Each key's list: the positions whose events name it (the index's map function), one row each,
-- written with the nodes of the fold that covered the position. A key's value chains exactly
-- these, so a lookup lists them and the verifier checks the chain.
CREATE TABLE ledger_index_postings (
    key_hash bytea NOT NULL CHECK (octet_length(key_hash) = 32),
    position int8  NOT NULL CHECK (position >= 1),
    PRIMARY KEY (key_hash, position)
);

-- The services' login folds and keeps: nodes inserted and updated, postings inserted, the one
-- state row updated; nothing is ever deleted.
GRANT SELECT, INSERT, UPDATE ON ledger_index_nodes TO ledger_service;
REVOKE DELETE, TRUNCATE ON ledger_index_nodes FROM ledger_service;
GRANT SELECT, INSERT ON ledger_index_postings TO ledger_service;
REVOKE UPDATE, DELETE, TRUNCATE ON ledger_index_postings FROM ledger_service;
