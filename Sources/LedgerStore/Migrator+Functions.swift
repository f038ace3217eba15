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

    /// Files whose checksum differs from the one recorded, or whose functions are no longer what
    /// applying it left (a body changed outside its file: the digest recorded after it was
    /// applied, 0028, differs from the database's definitions now).
    static func pendingFunctions(
        _ files: [Migration], _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [Migration] {
        let exists = try await connection.queryUnlessClosed(
            """
            SELECT to_regclass('ledger_repeatable_migrations') IS NOT NULL,
                   EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('ledger_repeatable_migrations') AND attname = 'definition')
            """, logger: logger)
        var (recordExists, digestExists) = (false, false)
        for try await (table, column) in exists.decode((Bool, Bool).self) { (recordExists, digestExists) = (table, column) }
        guard recordExists else { return files }
        let rows = try await connection.queryUnlessClosed(
            PostgresQuery(
                unsafeSQL: "SELECT name, checksum, \(digestExists ? "definition" : "NULL::text") FROM ledger_repeatable_migrations"),
            logger: logger)
        var recorded: [String: (checksum: String, digest: String?)] = [:]
        for try await (name, checksum, digest) in rows.decode((String, String, String?).self) { recorded[name] = (checksum, digest) }
        let current = try await definitions(connection, logger)
        return files.filter { file in
            guard let record = recorded[file.name], record.checksum == file.checksum else { return true }
            return record.digest.map { $0 != current[Self.functionName(file)]?.digest } ?? false
        }
    }

    /// The ledger's functions (`ledger_…` in schema public, none an extension's) that no file
    /// defines, and names with more overloads than their file defines: refused, not dropped
    /// (`ledger migrate` cannot know whose they are).
    static func unknownFunctions(_ files: [Migration], _ connection: PostgresConnection, _ logger: Logger) async throws -> [String] {
        let defined = Dictionary(files.map { (Self.functionName($0), SQLScript.definitions($0.sql)) }, uniquingKeysWith: +)
        return try await definitions(connection, logger).compactMap { name, found in
            guard let count = defined[name] else { return name }
            return found.count > count ? "\(name) (\(found.count - count) overload(s) no file defines)" : nil
        }.sorted()
    }

    /// The function a file defines (each file is named after its function, overloads sharing it).
    static func functionName(_ file: Migration) -> String { String(file.name.dropLast(".sql".count)) }

    /// Each of the ledger's function names (`ledger_…` in schema public, none an extension's, no
    /// aggregate) with a digest of its definitions: md5 of every overload's `pg_get_functiondef`
    /// (body and every attribute) and owner, in signature order; and how many overloads. (Grants
    /// are not in it: applying a file again would not restore them.)
    static let definitionsQuery = """
        SELECT p.proname::text,
               md5(string_agg(pg_get_functiondef(p.oid) || p.proowner::regrole::text, E'\\n'
                              ORDER BY p.oid::regprocedure::text)),
               count(*)
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.proname LIKE 'ledger\\_%' AND p.prokind <> 'a' AND NOT EXISTS (
            SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
        GROUP BY p.proname
        """

    static func definitions(_ connection: PostgresConnection, _ logger: Logger) async throws -> [String: (digest: String, count: Int)] {
        var result: [String: (digest: String, count: Int)] = [:]
        let rows = try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: definitionsQuery), logger: logger)
        for try await (name, digest, count) in rows.decode((String, String, Int64).self) { result[name] = (digest, Int(count)) }
        return result
    }

    /// Records, for every file, the digest of what its functions are now (after they were applied).
    static func recordDefinitions(_ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.queryUnlessClosed(
            PostgresQuery(
                unsafeSQL: """
                    UPDATE ledger_repeatable_migrations r SET definition = d.digest
                    FROM (\(definitionsQuery)) AS d(name, digest, count) WHERE r.name = d.name || '.sql'
                    """), logger: logger)
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
