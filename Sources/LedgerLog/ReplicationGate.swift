import LedgerBackup
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
///   physical slot named `ledger_backup` or `ledger_backup_…` (`BackupSlot`) counts
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
/// WAL positions are bytes (`pg_lsn - '0/0'`). The queries are `LogStore+Gate`'s: the head
/// with the WAL that covers it, and the standbys as the primary sees them; the rules above
/// decide here from what they read.
struct ReplicationGate {
    let store: LogStore

    /// The log's head, and the WAL position that covers every event up to it.
    func head(_ connection: PostgresConnection) async throws -> (position: Int64, wal: Int64) {
        try await store.head(on: connection)
    }

    /// The WAL position every promotable standby has flushed; nil when there are none (sign
    /// everything). Throws when the role cannot see its standbys' positions.
    func replicated(_ connection: PostgresConnection) async throws -> Int64? {
        // Each connected backup's flushed position first, as its own step: what the gate counts
        // for a backup while its receiver is away.
        try await BackupPositions.record(on: connection, logger: store.logger)
        guard let standbys = try await store.standbys(on: connection) else { return nil }
        guard standbys.hidden == 0 else {
            throw CheckpointError(
                "the checkpointer's role cannot see its standbys' WAL positions (pg_stat_replication): "
                    + "GRANT pg_read_all_stats TO ledger_service; not signing")
        }
        // Backups count in every mode, at most at what they are known to have flushed.
        let backups = standbys.backups ?? .max
        // Every standby and slot, as under asynchronous replication.
        let everyone = standbys.all.map { min($0, backups) } ?? standbys.backups
        guard standbys.synchronous else { return everyone }
        if let sync = standbys.sync { return min(sync, backups) }
        // Only backups acknowledge synchronously: the standbys that may be promoted do not.
        if standbys.backupSync { return everyone }
        // No synchronous standby connected: nothing is replicated where a commit waits.
        return 0
    }
}
