import LedgerPostgres
import Logging
import PostgresNIO

/// Repeatable function files (Flyway's repeatable migrations): each file of
/// `Migrations/functions` holds one SQL function's current definition, written to be run again
/// (CREATE OR REPLACE). A file is applied whenever its checksum differs from the one recorded in
/// `ledger_repeatable_migrations` (0023), after the numbered migrations, in their transaction and
/// under their lock; so a database is current once both its numbered migrations and its function
/// files are. Files are applied in name order. What CREATE OR REPLACE cannot do (drop a function,
/// change its arguments or result type) takes a numbered migration first.
extension Migrator {
    /// Names of the function files whose checksum differs from the one recorded: every file on a
    /// database that has no record yet (before 0023).
    public func pendingFunctions() async throws -> [String] {
        try await client.withConnection { connection in
            try await Self.pendingFunctions(functions, connection, logger).map(\.name)
        }
    }

    static func pendingFunctions(
        _ files: [Migration], _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [Migration] {
        let exists = try await connection.queryUnlessClosed(
            "SELECT to_regclass('ledger_repeatable_migrations') IS NOT NULL", logger: logger)
        var recordExists = false
        for try await (value) in exists.decode(Bool.self) { recordExists = value }
        guard recordExists else { return files }
        let rows = try await connection.queryUnlessClosed(
            "SELECT name, checksum FROM ledger_repeatable_migrations", logger: logger)
        var recorded: [String: String] = [:]
        for try await (name, checksum) in rows.decode((String, String).self) { recorded[name] = checksum }
        return files.filter { recorded[$0.name] != $0.checksum }
    }

    /// Applies and records each function file whose checksum changed (`all`: every file); returns
    /// their names. Called inside the migrations' transaction, holding their advisory lock, so
    /// concurrent migrators apply each change once.
    @discardableResult
    static func applyFunctions(
        _ files: [Migration], _ connection: PostgresConnection, _ logger: Logger, all: Bool = false
    ) async throws -> [String] {
        let changed = all ? files : try await Self.pendingFunctions(files, connection, logger)
        for file in changed {
            logger.info("applying function file", metadata: ["name": "\(file.name)"])
            try await Self.execute(file, connection, logger)
            try await connection.queryUnlessClosed(
                """
                INSERT INTO ledger_repeatable_migrations (name, checksum) VALUES (\(file.name), \(file.checksum))
                ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()
                """,
                logger: logger)
        }
        return changed.map(\.name)
    }
}
