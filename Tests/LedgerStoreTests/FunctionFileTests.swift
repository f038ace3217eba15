import Foundation
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// The repeatable function files of `Migrations/functions`: a migrated database's SQL functions
/// are exactly the files', a database the previous release made upgrades, and a file is applied
/// again exactly when its checksum changes.
@Suite("Function files")
struct FunctionFileTests {
    @Test("a migrated database's functions equal the files; applying every file again changes no definition")
    func functionsEqualFiles() async throws {
        let settings = try await TestCluster.shared.makeEmptyDatabase()
        try await withClient(settings) { client in
            let migrator = try Migrator(client: client, logger: Logger(label: "m"))
            try await migrator.migrate()
            try await Self.expectFunctionsEqualFiles(client, migrator)
        }
    }

    @Test("a database the previous release made upgrades: later migrations and every file, events, chain intact")
    func upgradeFromPreviousRelease() async throws {
        let settings = try await TestCluster.shared.makeEmptyDatabase()
        try await Self.load("previous-release", into: settings)
        try await withClient(settings) { client in
            let migrator = try Migrator(client: client, logger: Logger(label: "m"))
            let store = EventStore(client: client, logger: Logger(label: "store"))
            let head = try await store.head()
            // The fixture's 17 events (its header says how it was made).
            #expect(head.position == 17)
            #expect(try await count(client) == head.position)
            // The previous release applied 0001…0022: everything after is pending.
            let pendingAfter0022 = migrator.migrations.map(\.name).filter { $0 > "0023" }
            #expect(pendingAfter0022.first == "0023_repeatable_functions.sql")
            #expect(try await migrator.pending() == pendingAfter0022)
            #expect(try await migrator.pendingFunctions() == migrator.functions.map(\.name))
            await #expect(throws: Migrator.MigrationError.self) { try await migrator.ensureCurrent() }

            #expect(try await migrator.migrate() == pendingAfter0022)
            try await migrator.ensureCurrent()
            #expect(try await Self.recorded(client).mapValues(\.checksum) == Self.checksums(migrator.functions))
            try await Self.expectFunctionsEqualFiles(client, migrator)

            #expect(try await store.head() == head)
            #expect(try await count(client) == head.position)
            let report = try await LogVerification(store: store).run()
            #expect(report.failure == nil)
            #expect(report.checked == head.position)

            // The functions as the files define them extend the same chain: one event, then a
            // group large enough for the plan-and-write path.
            let one = try await store.append(
                .init(streamId: "upgraded", expectedVersion: .noStream, events: [event("Upgraded", 0)]))
            #expect(one.firstPosition == head.position + 1)
            let many = try await store.append(
                .init(
                    streamId: "upgraded", expectedVersion: .exact(1),
                    events: (1...200).map { event("Upgraded", $0) }))
            #expect(many.lastPosition == head.position + 201)
            let after = try await LogVerification(store: store).run()
            #expect(after.failure == nil)
            #expect(after.checked == head.position + 201)
        }
    }

    @Test("a file is applied again exactly when its checksum changes, and its new checksum recorded")
    func checksumRule() async throws {
        let settings = try await TestCluster.shared.makeEmptyDatabase()
        try await withClient(settings) { client in
            let migrator = try Migrator(client: client, logger: Logger(label: "m"))
            #expect(try await migrator.pendingFunctions() == migrator.functions.map(\.name))
            try await migrator.migrate()
            #expect(try await migrator.pendingFunctions() == [])
            let first = try await Self.recorded(client)
            #expect(first.mapValues(\.checksum) == Self.checksums(migrator.functions))

            // Nothing changed: nothing applied, nothing recorded anew.
            #expect(try await migrator.migrate() == [])
            #expect(try await Self.recorded(client) == first)

            // One file changed: that one applied and recorded, the others left as they were.
            let target = "ledger_value.sql"
            let addition = "\nCOMMENT ON FUNCTION ledger_value(text) IS 'applied again';\n"
            let edited = migrator.functions.map { file in
                file.name != target ? file : Migrator.Migration(name: file.name, sql: file.sql + addition)
            }
            let changed = try Migrator(client: client, logger: Logger(label: "m"), functions: edited)
            #expect(try await changed.pendingFunctions() == [target])
            await #expect(throws: Migrator.MigrationError.self) { try await changed.ensureCurrent() }
            #expect(try await changed.migrate() == [])
            try await changed.ensureCurrent()
            #expect(try await Self.comment(client) == "applied again")
            let second = try await Self.recorded(client)
            #expect(second[target]?.checksum == Self.checksums(edited)[target])
            #expect(second[target]?.appliedAt != first[target]?.appliedAt)
            #expect(second.filter { $0.key != target } == first.filter { $0.key != target })
            // The binary's own file differs from the record now: it would be applied again.
            #expect(try await migrator.pendingFunctions() == [target])
        }
    }

    /// The functions of schema public (none an extension's) are exactly those the files define,
    /// each file defining the function it is named after with CREATE OR REPLACE; and applying
    /// every file again through the migrator leaves every definition as it was.
    static func expectFunctionsEqualFiles(_ client: PostgresClient, _ migrator: Migrator) async throws {
        let named = Set(migrator.functions.map { String($0.name.dropLast(".sql".count)) })
        for file in migrator.functions {
            #expect(Self.definedNames(file) == Set([String(file.name.dropLast(".sql".count))]), "\(file.name)")
        }
        let before = try await Self.functions(client)
        #expect(Set(before.values.map { $0.name }) == named)

        let again = migrator.functions.map { Migrator.Migration(name: $0.name, sql: $0.sql + "\n-- applied again\n") }
        let reapplying = try Migrator(client: client, logger: Logger(label: "m"), functions: again)
        #expect(try await reapplying.pendingFunctions() == migrator.functions.map(\.name))
        #expect(try await reapplying.migrate() == [])
        #expect(try await reapplying.pendingFunctions() == [])
        let after = try await Self.functions(client)
        #expect(after.keys.sorted() == before.keys.sorted())
        for (signature, function) in before {
            #expect(after[signature] == function, "\(signature)")
        }
    }

    /// The names a file's CREATE OR REPLACE FUNCTION and PROCEDURE statements give.
    static func definedNames(_ file: Migrator.Migration) -> Set<String> {
        var names: Set<String> = []
        for statement in SQLScript.statements(file.sql) {
            let code = statement.split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }
                .joined(separator: "\n")
            for kind in ["CREATE OR REPLACE FUNCTION ", "CREATE OR REPLACE PROCEDURE "] where code.hasPrefix(kind) {
                names.insert(String(code.dropFirst(kind.count).prefix { $0 == "_" || $0.isLetter || $0.isNumber }))
            }
        }
        return names
    }

    /// Every function of schema public that no extension brings, by signature: its name and
    /// `pg_get_functiondef` (which holds the body and every attribute).
    static func functions(_ client: PostgresClient) async throws -> [String: DefinedFunction] {
        let rows = try await client.query(
            """
            SELECT p.oid::regprocedure::text, p.proname::text, pg_get_functiondef(p.oid)
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'public' AND NOT EXISTS (
                SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
            """)
        var result: [String: DefinedFunction] = [:]
        for try await (signature, name, definition) in rows.decode((String, String, String).self) {
            result[signature] = DefinedFunction(name: name, definition: definition)
        }
        return result
    }

    struct DefinedFunction: Sendable, Equatable {
        var name: String
        var definition: String
    }

    struct Record: Sendable, Equatable {
        var checksum: String
        var appliedAt: Date
    }

    /// `ledger_repeatable_migrations` by file name.
    static func recorded(_ client: PostgresClient) async throws -> [String: Record] {
        let rows = try await client.query("SELECT name, checksum, applied_at FROM ledger_repeatable_migrations")
        var result: [String: Record] = [:]
        for try await (name, checksum, appliedAt) in rows.decode((String, String, Date).self) {
            result[name] = Record(checksum: checksum, appliedAt: appliedAt)
        }
        return result
    }

    static func checksums(_ files: [Migrator.Migration]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.checksum) })
    }

    static func comment(_ client: PostgresClient) async throws -> String? {
        let rows = try await client.query("SELECT obj_description('ledger_value(text)'::regprocedure, 'pg_proc')")
        var comment: String?
        for try await (value) in rows.decode(String?.self) { comment = value }
        return comment
    }

    /// Loads a `Fixtures` dump with psql, as an operator restores one.
    static func load(_ fixture: String, into settings: DatabaseSettings) async throws {
        let resources = try #require(Bundle.module.resourceURL)
        let file = resources.appendingPathComponent("Fixtures/\(fixture).sql")
        let environment = ProcessInfo.processInfo.environment.merging(["PGPASSWORD": settings.password ?? ""]) { $1 }
        try await ProcessRunner.check(
            try EmbeddedPostgres.binaries() + "/psql",
            [
                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", settings.host, "-p", String(settings.port),
                "-U", settings.username, "-d", settings.database, "-f", file.path,
            ],
            environment: environment)
    }
}
