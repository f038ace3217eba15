import Foundation
import LedgerMigrations
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// The schema cannot drift unseen: a function changed outside its file, or one no file defines,
/// is refused by the servers' start-up check (`ensureCurrent`) and seen by `ledger migrate`; an
/// applied numbered migration's file never changes.
@Suite("Schema drift")
struct SchemaDriftTests {
    static func body(_ client: PostgresClient, _ function: String) async throws -> String {
        let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT prosrc FROM pg_proc WHERE proname = '\(function)'"))
        for try await source in rows.decode(String.self) { return source }
        return ""
    }

    static func refusal(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as Migrator.MigrationError {
            return error.description
        } catch {
            return "\(error)"
        }
    }

    /// A body changed by the owner outside its file: refused by ensureCurrent, applied again by
    /// migrate; a function no file defines: refused by both until dropped.
    @Test("a function changed outside its file, or in none: refused by ensureCurrent; migrate reapplies files")
    func changedAndExtraFunctions() async throws {
        let settings = try await TestCluster.shared.makeEmptyDatabase()
        try await withClient(settings) { client in
            let migrator = try Migrator(client: client, logger: Logger(label: "drift"))
            try await migrator.migrate()
            try await migrator.ensureCurrent()
            let original = try await Self.body(client, "ledger_expiry_overdue")
            #expect(original.contains("count(*)"))

            try await client.query(
                "CREATE OR REPLACE FUNCTION ledger_expiry_overdue(p_now timestamptz) RETURNS int8 LANGUAGE sql STABLE AS $$ SELECT 0::int8 $$"
            )
            #expect(try await migrator.pendingFunctions() == ["ledger_expiry_overdue.sql"])
            let changed = await Self.refusal { try await migrator.ensureCurrent() }
            #expect(changed?.contains("ledger_expiry_overdue.sql") == true, "\(String(describing: changed))")
            #expect(try await migrator.migrate() == [])
            #expect(try await Self.body(client, "ledger_expiry_overdue") == original, "migrate applied the file again")
            try await migrator.ensureCurrent()

            try await client.query("CREATE FUNCTION ledger_backdoor() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$")
            let extra = await Self.refusal { try await migrator.ensureCurrent() }
            #expect(extra?.contains("ledger_backdoor") == true, "\(String(describing: extra))")
            let migrating = await Self.refusal { try await migrator.migrate() }
            #expect(migrating?.contains("ledger_backdoor") == true, "\(String(describing: migrating))")
            // An overload of a function a file defines: that file's functions changed, and the
            // overload is refused by both (applying the file again would not remove it).
            try await client.query("DROP FUNCTION ledger_backdoor()")
            try await client.query("CREATE FUNCTION ledger_value(p text, extra int) RETURNS text LANGUAGE sql AS $$ SELECT p $$")
            #expect(try await migrator.pendingFunctions() == ["ledger_value.sql"])
            let overload = await Self.refusal { try await migrator.migrate() }
            #expect(overload?.contains("ledger_value (1 overload(s) no file defines)") == true, "\(String(describing: overload))")
            try await client.query("DROP FUNCTION ledger_value(text, int)")
            try await migrator.ensureCurrent()
        }
    }

    /// An applied numbered migration's file never changes: each file's SHA-256 is pinned
    /// (Fixtures/numbered-migrations.sha256).
    @Test("an applied numbered migration never changes: each file's SHA-256 is pinned in Fixtures")
    func numberedMigrationsPinned() throws {
        let url = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures/numbered-migrations.sha256")
        var pinned: [String: String] = [:]
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            pinned[String(parts[1])] = String(parts[0])
        }
        let migrations = try LedgerMigrationFiles.all().map { Migrator.Migration(name: $0.name, sql: $0.sql) }
        #expect(pinned.count >= 28)
        for migration in migrations {
            // A new migration: add its line (sha256sum) when it ships; a changed line: an applied file was edited.
            #expect(pinned[migration.name] == migration.checksum, "\(migration.name) is not its pinned self")
        }
        #expect(Set(pinned.keys) == Set(migrations.map(\.name)), "a pinned migration is gone")
    }
}
