import Foundation

/// The numbered SQL files of `Migrations/sql`, shipped with the binary.
public enum LedgerMigrationFiles {
    /// The migration files as (name, SQL) in order of their number.
    public static func all() throws -> [(name: String, sql: String)] {
        guard let dir = Bundle.module.url(forResource: "sql", withExtension: nil) else {
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
