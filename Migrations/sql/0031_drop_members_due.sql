-- The expiry service, its status and the overdue count read each collaboration's next window end
-- from the stream rows (0030: ledger_streams.next_due_at and ledger_streams_next_due), so nothing
-- reads proj_members_due any more; it only cost every member fold and every rebuild.
DROP INDEX IF EXISTS proj_members_due;
