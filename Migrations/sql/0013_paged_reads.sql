-- Paged reads and time travel in O(page).
--
-- An identity's access history in root hash order: the members of a collaboration at position
-- P, from a root hash on, are one range scan of this index,
--   collaboration_id = c AND root_hash > after AND position <= P
-- folded per identity as it streams by (GroupAggregate, the fold of ledger_members_at) and cut
-- off after a page: a page costs the history rows of the identities it passes, whatever the
-- collaboration's size.
CREATE INDEX proj_access_history_identity ON proj_access_history (collaboration_id, root_hash, position);

-- The position of `asOf=T`: the collaboration's change recorded last at or before T, one
-- backward step of this index (walking the history back from its end by position instead cost
-- a scan of every change after T: 52 ms p50 on a 1,000,000-event collaboration).
CREATE INDEX proj_access_history_time ON proj_access_history (collaboration_id, at, position);

-- Paging cursors are opaque to clients and signed (HMAC-SHA256) with this key, shared by
-- every API process of the database: a cursor changed by a client is refused, not followed.
CREATE TABLE ledger_cursor_key (
    only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    key       bytea   NOT NULL
);
INSERT INTO ledger_cursor_key (key) VALUES (uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()));
