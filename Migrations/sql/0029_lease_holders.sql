-- Who holds a service's lease, as the holder records it when it takes the lease (SPEC "The
-- expiry lease tells the truth"): its session (pid, application_name), since when, and when it
-- last made a round of progress. An advisory lock any login can take: status compares the lock's
-- holder (pg_locks) with this record, so a session that is not the service holding the lock is
-- shown as such, never as the service running.
CREATE TABLE ledger_lease_holders (
    name text PRIMARY KEY,
    pid int NOT NULL,
    application_name text NOT NULL,
    since timestamptz NOT NULL,
    progress_at timestamptz NOT NULL
);
GRANT SELECT, INSERT, UPDATE ON ledger_lease_holders TO ledger_service;
REVOKE DELETE, TRUNCATE ON ledger_lease_holders FROM ledger_service;
