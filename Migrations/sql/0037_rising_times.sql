-- Times rise along the log (docs/TRUST.md, "The verifiable index", "Members at a time"). An
-- append took its time before it waited for the head's lock, so two racing appends could commit
-- in the other order and a later position carry an earlier time: no prefix of the log was
-- "every event recorded up to T". From here on an append takes its time under the head's lock,
-- never below the previous append's, which the head now keeps (`recorded_at`); so the events
-- recorded at or before T are exactly the positions before the first one recorded after T.
-- Positions recorded before this migration may fall by an append's duration; `ledger index
-- verify` names the first position from which times rise.
ALTER TABLE ledger_head ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT '-infinity';
-- The latest time among the last 10,000 positions (the old rule reordered times only among
-- appends waiting on the lock at once), read by the primary key, not a scan of the log while the
-- head is locked.
UPDATE ledger_head h SET recorded_at = coalesce(
    (SELECT max(e.recorded_at) FROM ledger_events e WHERE e.position > h.position - 10000), '-infinity');
