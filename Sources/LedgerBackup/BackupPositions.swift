import LedgerPostgres
import Logging
import PostgresNIO

/// How far each backup has flushed, as the ledger records it (`ledger_backup_positions`,
/// Migrations/sql/0024): a backup counts at its receiver's flushed position while the receiver is
/// connected, and at the recorded one while it is away, because a slot made afresh by a new leader
/// starts at that leader's WAL position, past what the backup has (`ReplicationGate`).
public enum BackupPositions {
    /// Records the flushed position of every backup receiver connected now, raised only. The
    /// replication gate runs it before it reads the standbys, on the primary.
    public static func record(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.queryUnlessClosed(
            """
            INSERT INTO ledger_backup_positions AS p (slot_name, flushed)
            SELECT b.slot_name, (r.flush_lsn - '0/0')::int8
            FROM pg_replication_slots b JOIN pg_stat_replication r ON r.pid = b.active_pid
            WHERE b.slot_type = 'physical' AND NOT b.temporary AND r.flush_lsn IS NOT NULL
              AND (b.slot_name = \(BackupSlot.prefix) OR b.slot_name LIKE \(BackupSlot.others))
            ON CONFLICT (slot_name) DO UPDATE SET flushed = excluded.flushed, updated_at = now() WHERE excluded.flushed > p.flushed
            """, logger: logger)
    }

    /// Forgets `slot`'s record, where the schema has the table (a database the ledger never
    /// migrated has none); true if there was one.
    static func forget(_ slot: String, client: PostgresClient, logger: Logger) async throws -> Bool {
        var recorded = false
        for try await exists in try await client.query("SELECT to_regclass('ledger_backup_positions') IS NOT NULL", logger: logger)
            .decode(Bool.self)
        { recorded = exists }
        guard recorded else { return false }
        var forgotten = false
        for try await _ in try await client.query(
            "DELETE FROM ledger_backup_positions WHERE slot_name = \(slot) RETURNING 1", logger: logger)
        {
            forgotten = true
        }
        return forgotten
    }
}
