import Foundation
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

@testable import LedgerPostgres

/// `DatabaseFailure`: a real server's errors, as an operator reads them (issue 65, item 4).
@Suite("Database errors an operator reads")
struct DatabaseFailureTests {
    let logger = Logger(label: "test")

    /// The error the test cluster's server raises for `sql`.
    func raised(_ sql: String, on settings: DatabaseSettings) async throws -> PSQLError {
        do {
            try await withClient(settings) { try await $0.query(PostgresQuery(unsafeSQL: sql)) }
        } catch let error as PSQLError {
            return error
        }
        Issue.record("no error raised by \(sql)")
        throw CancellationError()
    }

    /// The server's major version, as `postgres --version` of the binaries the tests run.
    static func serverMajor() async throws -> Int {
        let binaries = try EmbeddedPostgres.binaries(preferring: ProcessInfo.processInfo.environment["LEDGER_PG_BIN"])
        let version = try await ProcessRunner.check(binaries + "/postgres", ["--version"])
        let number = version.split(separator: " ").first { $0.first?.isNumber == true } ?? ""
        return try #require(Int(number.split(separator: ".").first ?? ""), "\(version)")
    }

    @Test("an extension the server lacks: its name, the SQLSTATE, the server's version, what to install")
    func missingExtension() async throws {
        let database = try await TestCluster.shared.makeDatabase()
        let failure = try await #require(throws: DatabaseFailure.self) {
            try await withClient(database) {
                try await PostgresAdmin.createExtension("plproxy_not_there", client: $0, logger: logger)
            }
        }
        let major = try await Self.serverMajor()
        #expect(failure.missingExtension == "plproxy_not_there")
        #expect(failure.serverMajor == major)
        #expect(["0A000", "58P01"].contains(failure.sqlState))
        #expect(failure.description.hasPrefix("PostgreSQL \(major) has no extension plproxy_not_there (SQLSTATE "), "\(failure)")
        #expect(failure.description.contains("Install the package of the extension plproxy_not_there where that server runs"))
        // PL/Proxy's package is named for the server's version (`ledger shards init`: OperatorErrorTests).
        #expect(
            DatabaseFailure.package(of: "plproxy", major: major)
                == "the package postgresql-\(major)-plproxy (apt-get install postgresql-\(major)-plproxy)")
    }

    @Test("a refused login: the role, the server, the database, where the password comes from, pg_hba.conf")
    func refusedLogin() async throws {
        var settings = try await TestCluster.shared.makeDatabase()
        settings.password = "not-the-password"
        let started = ContinuousClock.now
        let failure = try await #require(throws: DatabaseFailure.self) {
            try await settings.checkLogin(passwordSource: "the password in the test's settings", logger: logger)
        }
        #expect(ContinuousClock.now - started < .seconds(10), "said at once, not after a pool's retries")
        #expect(failure.sqlState == "28P01")
        #expect(
            failure.description
                == "PostgreSQL at \(settings.host):\(settings.port) refused the login of role \"\(settings.username)\" to database "
                + "\"\(settings.database)\" (SQLSTATE 28P01: password authentication failed for user \"\(settings.username)\"). "
                + "Check the password in the test's settings and that the server's pg_hba.conf admits this role from this host.")
        // A server out of reach is left to the pool, which waits for it as it did.
        var away = settings
        away.port = 1
        try await away.checkLogin(passwordSource: "", logger: logger)
    }

    @Test("any other error: what was being done, the SQLSTATE, the message, the detail as a clause, the hint")
    func serverError() async throws {
        let database = try await TestCluster.shared.makeDatabase()
        let missing = DatabaseFailure(
            try await raised("SELECT * FROM no_such_table", on: database), doing: "reading the table", on: database)
        #expect(
            missing.description
                == "reading the table: PostgreSQL at \(database.host):\(database.port) answered SQLSTATE 42P01: "
                + "relation \"no_such_table\" does not exist.")
        try await withClient(database) { try await $0.query("CREATE TABLE twice (id int PRIMARY KEY)") }
        let twice = try await raised("INSERT INTO twice VALUES (1), (1)", on: database)
        #expect(
            DatabaseFailure.describe(twice)
                == "PostgreSQL answered SQLSTATE 23505: duplicate key value violates unique constraint \"twice_pkey\" "
                + "(Key (id)=(1) already exists).")
        #expect(!DatabaseFailure.describe(twice, reflecting: true).contains("PSQLError"))
        #expect(DatabaseFailure.describe(CancellationError()) == "CancellationError()")
        // Explained once, an outer step adds only what the inner one lacked.
        let explained = try await #require(throws: DatabaseFailure.self) {
            try await DatabaseFailure.explaining("the outer step", on: database) {
                try await DatabaseFailure.explaining("the inner step") { throw missing.error }
            }
        }
        #expect(explained.doing == "the inner step" && explained.place == database)
    }
}
