import LedgerBackup
import LedgerPostgres
import Logging
import PostgresNIO

/// What the replication gate reads (`ReplicationGate` says which standbys count and why): the
/// log's head with the WAL position covering it, and how far the primary's standbys, backup
/// receivers and replication slots have flushed. WAL positions are bytes (`pg_lsn - '0/0'`).
extension LogStore {
    /// The log's head, and the WAL position that covers every event up to it: read after the
    /// head, in the same statement, the primary's flushed WAL (with `synchronous_commit` on or
    /// `local` a commit is flushed before it is visible), or where it is `off` for the ledger's
    /// login, the WAL inserted so far (a commit record is inserted before it is visible).
    func head(on connection: PostgresConnection) async throws -> (position: Int64, wal: Int64) {
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT h.position, (CASE WHEN current_setting('synchronous_commit') = 'off' THEN pg_current_wal_insert_lsn()
                                     ELSE pg_current_wal_flush_lsn() END - '0/0')::int8
            FROM ledger_head h
            """, logger: logger)
        for try await head in rows.decode((Int64, Int64).self) { return head }
        throw CheckpointError("ledger_head row missing: run migrations")
    }

    /// How far the primary's standbys have flushed, as `ReplicationGate` weighs it.
    struct Standbys: Sendable, Equatable {
        /// `synchronous_standby_names` is set.
        var synchronous: Bool
        /// Standbys whose state this role cannot see (no `pg_read_all_stats`).
        var hidden: Int64
        /// The least flushed of the connected synchronous standbys that are not backup receivers.
        var sync: Int64?
        /// A backup receiver is among the synchronous standbys.
        var backupSync: Bool
        /// The least flushed of every counted standby and physical slot.
        var all: Int64?
        /// The least flushed of the backups (`BackupSlot`), as counted above.
        var backups: Int64?
    }

    /// What the primary says of its standbys now. Not counted: base backups in progress, logical
    /// replication, temporary slots, slots no standby has used yet (no `restart_lsn`) or whose
    /// WAL is lost.
    ///
    /// A backup counts at its receiver's flushed position while the receiver is connected (the
    /// gate has just recorded it: `BackupPositions.record`); while it is away, at the least of its
    /// slot's position and the recorded one (a slot made afresh by a new leader starts at that
    /// leader's WAL position, past what the backup has); a recorded backup whose slot is gone, at
    /// the recorded position.
    func standbys(on connection: PostgresConnection) async throws -> Standbys? {
        let rows = try await connection.queryUnlessClosed(
            """
            WITH backup_slots AS (SELECT slot_name, active_pid, (restart_lsn - '0/0')::int8 AS restart FROM pg_replication_slots
                                  WHERE slot_type = 'physical' AND NOT temporary
                                    AND (slot_name = \(BackupSlot.prefix) OR slot_name LIKE \(BackupSlot.others))),
                 live AS (SELECT b.slot_name, (r.flush_lsn - '0/0')::int8 AS flushed
                          FROM backup_slots b JOIN pg_stat_replication r ON r.pid = b.active_pid WHERE r.flush_lsn IS NOT NULL),
                 counted AS (SELECT coalesce(l.flushed, least(b.restart, p.flushed)) AS flushed
                             FROM backup_slots b FULL JOIN ledger_backup_positions p ON p.slot_name = b.slot_name
                             LEFT JOIN live l ON l.slot_name = b.slot_name),
                 s AS (SELECT state, sync_state IN ('sync', 'quorum') AS sync,
                              pid IN (SELECT active_pid FROM backup_slots WHERE active_pid IS NOT NULL) AS backup,
                              (coalesce(flush_lsn, '0/0') - '0/0')::int8 AS flushed FROM pg_stat_replication
                       WHERE state IS DISTINCT FROM 'backup' AND application_name <> 'pg_basebackup'
                         AND pid NOT IN (SELECT active_pid FROM pg_replication_slots WHERE slot_type = 'logical' AND active_pid IS NOT NULL)),
                 slots AS (SELECT slot_name, (restart_lsn - '0/0')::int8 AS flushed FROM pg_replication_slots
                           WHERE slot_type = 'physical' AND NOT temporary AND restart_lsn IS NOT NULL AND wal_status IS DISTINCT FROM 'lost')
            SELECT current_setting('synchronous_standby_names') <> '',
                   (SELECT count(*) FROM pg_stat_replication WHERE state IS NULL),
                   (SELECT min(flushed) FROM s WHERE sync AND NOT backup),
                   EXISTS (SELECT 1 FROM s WHERE sync AND backup),
                   (SELECT min(flushed) FROM (SELECT flushed FROM s UNION ALL SELECT flushed FROM slots) a),
                   (SELECT min(flushed) FROM counted)
            """, logger: logger)
        for try await (synchronous, hidden, sync, backupSync, all, backups) in rows.decode((Bool, Int64, Int64?, Bool, Int64?, Int64?).self)
        {
            return Standbys(synchronous: synchronous, hidden: hidden, sync: sync, backupSync: backupSync, all: all, backups: backups)
        }
        return nil
    }
}
