import LedgerStore
import LedgerTestSupport
import PostgresNIO
import Testing

/// The migrator on an empty database: numbered files applied in order and once, history that
/// changed refused, a schema behind the files reported.
@Suite("Migrations")
struct MigrationTests {
    @Test("applies in order once, refuses changed history, reports a schema that is behind")
    func migrations() async throws {
        let settings = try await TestCluster.shared.makeEmptyDatabase()
        try await withClient(settings) { client in
            let migrator = try Migrator(client: client, logger: .init(label: "m"))
            #expect(!migrator.migrations.isEmpty)
            await #expect(throws: Migrator.MigrationError.self) { try await migrator.ensureCurrent() }
            #expect(try await migrator.pending() == migrator.migrations.map(\.name))
            #expect(try await migrator.migrate() == migrator.migrations.map(\.name))
            #expect(try await migrator.migrate() == [])
            try await migrator.ensureCurrent()

            var changed = migrator.migrations
            changed[0].sql += "\n-- edited"
            let edited = try Migrator(client: client, logger: .init(label: "m"), migrations: changed)
            await #expect(throws: Migrator.MigrationError.self) { try await edited.migrate() }

            var renamed = migrator.migrations
            renamed[0].name = "0001_other.sql"
            let reordered = try Migrator(client: client, logger: .init(label: "m"), migrations: renamed)
            await #expect(throws: Migrator.MigrationError.self) { try await reordered.ensureCurrent() }

            let newer = try Migrator(
                client: client, logger: .init(label: "m"),
                migrations: migrator.migrations + [.init(name: "9999_next.sql", sql: "CREATE TABLE next_thing (id int)")])
            await #expect(throws: Migrator.MigrationError.self) { try await newer.ensureCurrent() }
            #expect(try await newer.migrate() == ["9999_next.sql"])
        }
    }

    @Test("concurrent migrators apply each file once")
    func concurrentMigrate() async throws {
        let settings = try await TestCluster.shared.makeEmptyDatabase()
        try await withClient(settings) { client in
            let applied = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<3 {
                    group.addTask { try await Migrator(client: client, logger: .init(label: "m")).migrate() }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            let all = try Migrator(client: client, logger: .init(label: "m")).migrations.map(\.name)
            #expect(applied.sorted() == all.sorted())
        }
    }
}
