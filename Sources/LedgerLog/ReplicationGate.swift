import LedgerPostgres
import Logging
import PostgresNIO

/// How far the log is safe to sign on a primary with standbys (SPEC "High availability"): a
/// checkpoint may cover an event only once every standby that could be promoted has flushed the
/// WAL of its commit, so no failover can leave a signed tree naming events the new primary lacks.
///
/// - **Synchronous** (`synchronous_standby_names` set): the synchronous standbys (`sync_state`
///   `sync` or `quorum`), at least one of them connected. A commit cancelled while it waited
///   for them is visible on the primary but not replicated: it waits here until they have it.
///   A backup's receiver may be synchronous too (Barman's `receive-wal`, for an RPO of zero),
///   but it can never be promoted: when the only synchronous standbys are backup receivers, the
///   promotable standbys are asynchronous and are counted as below.
/// - **Asynchronous**: every connected standby, and every physical replication slot (a standby
///   that is away keeps its slot, and its `restart_lsn` is how far it flushed; Patroni keeps a
///   slot per member and drops it when the member leaves).
/// - **Backups, in both modes**: a backup's WAL stream (`ledger backup`, or Barman's) through a
///   physical slot named `ledger_backup` or `ledger_backup_…` (`WALArchive.defaultSlot`) counts
///   like a standby, so no checkpoint covers WAL the backup has not flushed, and a restore of it
///   extends every published checkpoint even when every database node is lost (SPEC "Backups and
///   recovery"). A stopped backup keeps its slot: checkpoints wait for it.
/// - **No standbys and no slots**: everything, as on a single server.
/// A base backup in progress (`pg_basebackup`) is not a standby yet.
///
/// Not counted: temporary slots (a base backup's), slots no standby has used yet (no
/// `restart_lsn`) or whose WAL is lost (their standby must be rebuilt, so it cannot be promoted
/// as it is), logical replication.
///
/// WAL positions are bytes (`pg_lsn - '0/0'`). The target of a head is read after the head, in
/// the same statement: the primary's flushed WAL, since with `synchronous_commit` on or `local`
/// a commit is flushed before it is visible; where it is `off` for the ledger's login, the WAL
/// inserted so far (a commit record is inserted before it is visible; signing may then wait
/// for the next commit to flush it).
struct ReplicationGate {
    let logger: Logger

    /// The name (or, followed by `_`, the prefix) of a backup's slot.
    static let backupSlot = WALArchive.defaultSlot

    /// The log's head, and the WAL position that covers every event up to it.
    func head(_ connection: PostgresConnection) async throws -> (position: Int64, wal: Int64) {
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT h.position, (CASE WHEN current_setting('synchronous_commit') = 'off' THEN pg_current_wal_insert_lsn()
                                     ELSE pg_current_wal_flush_lsn() END - '0/0')::int8
            FROM ledger_head h
            """, logger: logger)
        for try await head in rows.decode((Int64, Int64).self) { return head }
        throw CheckpointError("ledger_head row missing: run migrations")
    }

    /// The WAL position every promotable standby has flushed; nil when there are none (sign
    /// everything). Throws when the role cannot see its standbys' positions.
    func replicated(_ connection: PostgresConnection) async throws -> Int64? {
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
            guard hidden == 0 else {
                throw CheckpointError(
                    "the checkpointer's role cannot see its standbys' WAL positions (pg_stat_replication): GRANT pg_read_all_stats TO ledger_service; not signing")
            }
            guard synchronous else { return all }
            if let sync { return min(sync, backups ?? .max) }
            // Only backups acknowledge synchronously: the standbys that may be promoted do not.
            if backupSync { return all }
            // No synchronous standby connected: nothing is replicated where a commit waits.
            return 0
        }
        return nil
    }
}
