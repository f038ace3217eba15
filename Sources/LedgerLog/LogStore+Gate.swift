import LedgerPostgres
import Logging
import PostgresNIO

/// What the replication gate reads (`ReplicationGate` says which standbys count and why): the
/// log's head with the WAL position covering it, and how far the primary's standbys, backup
/// receivers and replication slots have flushed. WAL positions are bytes (`pg_lsn - '0/0'`).
extension LogStore {
    /// The name (or, followed by `_`, the prefix) of a backup's slot.
    static let backupSlot = WALArchive.defaultSlot

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
        /// The least flushed of the backups' slots (`ledger_backup`, `ledger_backup_…`).
        var backups: Int64?
    }

    /// What the primary says of its standbys now. Not counted: base backups in progress, logical
    /// replication, temporary slots, slots no standby has used yet (no `restart_lsn`) or whose
    /// WAL is lost.
    func standbys(on connection: PostgresConnection) async throws -> Standbys? {
        let rows = try await connection.queryUnlessClosed(
            """
            WITH receivers AS (SELECT active_pid FROM pg_replication_slots
                               WHERE slot_type = 'physical' AND active_pid IS NOT NULL
                                 AND (slot_name = \(Self.backupSlot) OR slot_name LIKE \(Self.backupSlot + "\\_%"))),
                 s AS (SELECT state, sync_state IN ('sync', 'quorum') AS sync, pid IN (SELECT active_pid FROM receivers) AS backup,
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
                   (SELECT min(flushed) FROM slots WHERE slot_name = \(Self.backupSlot) OR slot_name LIKE \(Self.backupSlot + "\\_%"))
            """, logger: logger)
        for try await (synchronous, hidden, sync, backupSync, all, backups) in rows.decode((Bool, Int64, Int64?, Bool, Int64?, Int64?).self) {
            return Standbys(synchronous: synchronous, hidden: hidden, sync: sync, backupSync: backupSync, all: all, backups: backups)
        }
        return nil
    }
}
