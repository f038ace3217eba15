import Foundation

/// The SQL files of `Migrations/`, shipped with the binary: the numbered migrations of `sql`
/// (tables and data, applied once) and the repeatable function files of `functions` (each SQL
/// function's current definition, applied again whenever the file changes).
public enum LedgerMigrationFiles {
    /// The migration files as (name, SQL) in order of their number.
    public static func all() throws -> [(name: String, sql: String)] { try files(in: "sql") }

    /// The function files as (name, SQL), sorted by name: one file per function, named after it.
    public static func functions() throws -> [(name: String, sql: String)] { try files(in: "functions") }

    private static func files(in folder: String) throws -> [(name: String, sql: String)] {
        guard let dir = Bundle.module.url(forResource: folder, withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
        return try names.map { name in
            (name, try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8))
        }
    }
}
