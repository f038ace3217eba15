import Crypto
import Foundation
import LedgerMigrations
import LedgerPostgres
import Logging
import PostgresNIO

/// Applies the numbered SQL files of `Migrations/sql` in order, in one transaction, under an
/// advisory lock, recording each file's name and checksum. Applied history is never
/// rewritten: a changed, renamed or reordered applied file is an error. Then, in the same
/// transaction, the function files of `Migrations/functions` whose checksum changed
/// (`Migrator+Functions.swift`).
public struct Migrator: Sendable {
    public struct Migration: Sendable, Equatable {
        public var name: String
        public var sql: String
        public var checksum: String { SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined() }

        public init(name: String, sql: String) {
            self.name = name
            self.sql = sql
        }
    }

    public struct MigrationError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Any number serves, as long as it is the same everywhere.
    static let advisoryLockKey: Int64 = 0x4C45_4447_4552  // "LEDGER"

    let client: PostgresClient
    let logger: Logger
    public let migrations: [Migration]
    /// The repeatable function files, one per SQL function, sorted by name.
    public let functions: [Migration]

    /// `migrations` and `functions` default to the files shipped in `LedgerMigrations`.
    public init(
        client: PostgresClient, logger: Logger, migrations: [Migration]? = nil, functions: [Migration]? = nil
    ) throws {
        self.client = client
        self.logger = logger
        self.migrations = try migrations ?? LedgerMigrationFiles.all().map { Migration(name: $0.name, sql: $0.sql) }
        self.functions = try functions ?? LedgerMigrationFiles.functions().map { Migration(name: $0.name, sql: $0.sql) }
    }

    /// Applies every pending migration, then every function file whose checksum changed;
    /// returns the names of the migrations applied.
    @discardableResult
    public func migrate() async throws -> [String] {
        // Nothing to do: no DDL, so a role that may not create tables can start on a current schema.
        if try await pending().isEmpty, try await pendingFunctions().isEmpty {
            try await refuseUnknownFunctions()
            return []
        }
        return try await client.transaction(logger: logger) { connection in
            try await connection.queryUnlessClosed("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))", logger: logger)
            try await Self.createTable(connection, logger)
            let pending = try await Self.pending(migrations, applied: Self.applied(connection, logger))
            for migration in pending {
                logger.info("applying migration", metadata: ["name": "\(migration.name)"])
                try await Self.execute(migration, connection, logger)
                try await connection.queryUnlessClosed(
                    "INSERT INTO ledger_migrations (name, checksum) VALUES (\(migration.name), \(migration.checksum))",
                    logger: logger)
            }
            // After the numbered ones: a function's body may name what they create. Where one ran,
            // every file is applied again (a numbered migration may have dropped a function with
            // what depended on it, or replaced one under the same name).
            try await Self.applyFunctions(functions, connection, logger, all: !pending.isEmpty)
            try await Self.recordDefinitions(connection, logger)
            // Refused inside the transaction: the numbered migrations may drop what no file defines.
            let unknown = try await Self.unknownFunctions(functions, connection, logger)
            if !unknown.isEmpty { throw Self.unknownFunctionsError(unknown) }
            return pending.map(\.name)
        }
    }

    /// Names of the migrations not yet applied (throws on a diverged history).
    public func pending() async throws -> [String] {
        try await client.withConnection { connection in
            let exists = try await connection.queryUnlessClosed("SELECT to_regclass('ledger_migrations') IS NOT NULL", logger: logger)
            var tableExists = false
            for try await (value) in exists.decode(Bool.self) { tableExists = value }
            let applied = tableExists ? try await Self.applied(connection, logger) : []
            return try Self.pending(migrations, applied: applied).map(\.name)
        }
    }

    /// Refuses to go on when the schema is behind the binary (a migration not applied, or a
    /// function file that changed): servers call this at start-up.
    public func ensureCurrent() async throws {
        let pending = try await pending()
        if !pending.isEmpty {
            throw MigrationError(
                description:
                    "the database schema is behind: \(pending.count) migration(s) not applied (\(pending.joined(separator: ", "))); run `ledger migrate`"
            )
        }
        let changed = try await pendingFunctions()
        if !changed.isEmpty {
            throw MigrationError(
                description:
                    "the database schema is behind: \(changed.count) function file(s) not applied, applied from "
                    + "another release, or changed outside their file (\(changed.joined(separator: ", "))); run `ledger migrate`"
            )
        }
        try await refuseUnknownFunctions()
    }

    func refuseUnknownFunctions() async throws {
        let unknown = try await client.withConnection { try await Self.unknownFunctions(functions, $0, logger) }
        if !unknown.isEmpty { throw Self.unknownFunctionsError(unknown) }
    }

    static func unknownFunctionsError(_ names: [String]) -> MigrationError {
        MigrationError(
            description: "the database has functions no file of Migrations/functions defines (\(names.joined(separator: ", "))): "
                + "drop them, or add their file; refusing to run on a schema that is not the release's")
    }

    /// Runs a file's statements one by one (PostgresNIO runs one statement per query).
    static func execute(_ file: Migration, _ connection: PostgresConnection, _ logger: Logger) async throws {
        for statement in SQLScript.statements(file.sql) {
            try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }

    static func createTable(_ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.queryUnlessClosed(
            """
            CREATE TABLE IF NOT EXISTS ledger_migrations (
                name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
    }

    static func applied(_ connection: PostgresConnection, _ logger: Logger) async throws -> [(String, String)] {
        let rows = try await connection.queryUnlessClosed(
            "SELECT name, checksum FROM ledger_migrations ORDER BY name", logger: logger)
        var result: [(String, String)] = []
        for try await (name, checksum) in rows.decode((String, String).self) { result.append((name, checksum)) }
        return result
    }

    static func pending(_ migrations: [Migration], applied: [(String, String)]) throws -> [Migration] {
        guard applied.count <= migrations.count else {
            throw MigrationError(
                description:
                    "the database has \(applied.count) migrations applied but this binary knows only \(migrations.count): it is older than the schema"
            )
        }
        for (index, (name, checksum)) in applied.enumerated() {
            let known = migrations[index]
            guard known.name == name else {
                throw MigrationError(
                    description:
                        "applied migration #\(index + 1) is \(name) but the binary has \(known.name) at that place: applied history was renamed or reordered"
                )
            }
            guard known.checksum == checksum else {
                throw MigrationError(description: "applied migration \(name) was changed after it was applied (checksum differs)")
            }
        }
        return Array(migrations.dropFirst(applied.count))
    }
}
