import Foundation
import LedgerPostgres
import LedgerTestSupport
import Testing

/// The three failures an operator meets most, each said by the real `ledger` binary in a sentence
/// that names what is missing or refused and what to do (issue 65, item 4), where PostgresNIO
/// alone said "PSQLError – Generic description to prevent accidental leakage of sensitive data".
@Suite("Errors that say what failed and what to do")
struct OperatorErrorTests {
    /// `ledger ARGUMENTS`, with no setting but `settings` (and the tests' PostgreSQL binaries).
    static func ledger(_ arguments: [String], _ settings: [String: String] = [:]) async throws -> ProcessRunner.Output {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") || $0.key == "LEDGER_PG_BIN" }
        environment.merge(settings) { $1 }
        return try await ProcessRunner.run(ledgerBinary(), arguments, environment: environment)
    }

    /// The sentence the command ended with (ArgumentParser's "Error: " line).
    static func said(_ run: ProcessRunner.Output) -> String {
        run.output.split(separator: "\n").last { $0.hasPrefix("Error: ") }.map(String.init) ?? "(no error line) \(run.output)"
    }

    /// A folder of the test's own, removed afterwards.
    static func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-errors-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    /// A data folder whose embedded cluster exists and is migrated (and stopped).
    static func migratedDataFolder(in folder: URL) async throws -> URL {
        let data = folder.appendingPathComponent("data")
        let made = try await ledger(["migrate", "--data-dir", data.path])
        #expect(made.status == 0, "\(made.output)")
        return data
    }

    static func running(_ data: URL) -> Bool {
        FileManager.default.fileExists(atPath: data.appendingPathComponent("pg/postmaster.pid").path)
    }

    @Test("serve on a data folder restored without its password file names the file and how to restore it")
    func missingPasswordFile() async throws {
        try await Self.withFolder { folder in
            let data = try await Self.migratedDataFolder(in: folder)
            let file = data.appendingPathComponent("pg-password")
            try FileManager.default.removeItem(at: file)
            let serve = try await Self.ledger(["serve", "--data-dir", data.path, "--port", "0"])
            #expect(serve.status != 0)
            #expect(
                Self.said(serve)
                    == "Error: \(file.path) is missing: the embedded PostgreSQL in \(data.path)/pg takes its owner's password from it "
                    + "(a restore without --identity leaves it out). Restore it with `ledger restore --from BACKUP_DIR "
                    + "--data-dir \(data.path) --secrets-only --identity FILE`, or write the owner's password into it (mode 0600).")
            #expect(!FileManager.default.fileExists(atPath: file.path), "no password of its own made in its place")
            #expect(!Self.running(data), "the cluster was not started")
        }
    }

    @Test("a refused login names the role, server, database and password's source; says to check pg_hba.conf")
    func refusedLogin() async throws {
        // A URL's login: said at once, not after a pool's minute of retries.
        let database = try await TestCluster.shared.makeDatabase()
        let url = "postgres://nobody:wrong@\(database.host):\(database.port)/\(database.database)?sslmode=disable"
        let started = ContinuousClock.now
        let migrate = try await Self.ledger(["migrate", "--database-url", url])
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(migrate.status != 0)
        #expect(
            Self.said(migrate)
                == "Error: `ledger migrate`: PostgreSQL at \(database.host):\(database.port) refused the login of role \"nobody\" "
                + "to database \"\(database.database)\" (SQLSTATE 28P01: password authentication failed for user \"nobody\"). "
                + "Check the password in LEDGER_DATABASE_URL (or --database-url) and that the server's pg_hba.conf admits this "
                + "role from this host.")
        // The embedded cluster's: its password file holds another password.
        try await Self.withFolder { folder in
            let data = try await Self.migratedDataFolder(in: folder)
            let file = data.appendingPathComponent("pg-password")
            try "not-the-password".write(to: file, atomically: true, encoding: .utf8)
            let serve = try await Self.ledger(["serve", "--data-dir", data.path, "--port", "0"])
            #expect(serve.status != 0)
            let said = Self.said(serve)
            #expect(said.hasPrefix("Error: starting the embedded PostgreSQL in \(data.path)/pg: PostgreSQL at 127.0.0.1:"), "\(said)")
            #expect(
                said.hasSuffix(
                    " refused the login of role \"ledger\" to database \"postgres\" (SQLSTATE 28P01: password authentication "
                        + "failed for user \"ledger\"). Check the password file \(file.path) and that the server's pg_hba.conf "
                        + "admits this role from this host."), "\(said)")
            #expect(!Self.running(data), "the cluster it started is stopped again")
        }
    }

    @Test("shards init where PL/Proxy is not installed names the package for the server's version")
    func missingExtension() async throws {
        try await Self.withFolder { folder in
            let (binaries, major) = try await Self.withoutPLProxy(in: folder)
            let data = folder.appendingPathComponent("data")
            let initialize = try await Self.ledger(
                ["shards", "init", "--count", "2", "--data-dir", data.path], ["LEDGER_PG_BIN": binaries])
            #expect(initialize.status != 0)
            let said = Self.said(initialize)
            #expect(said.hasPrefix("Error: defining the PL/Proxy cluster ledger_shards: PostgreSQL \(major) at 127.0.0.1:"), "\(said)")
            #expect(
                said.hasSuffix(
                    " has no extension plproxy (SQLSTATE 0A000: extension \"plproxy\" is not available). Install the package "
                        + "postgresql-\(major)-plproxy (apt-get install postgresql-\(major)-plproxy) where that server runs, "
                        + "then run this again."), "\(said)")
            #expect(!Self.running(data), "the cluster is stopped")
        }
    }

    /// The machine's PostgreSQL server, as installed but without PL/Proxy (whether or not the
    /// machine has it): its server binaries copied under `folder` at the same path, so that the
    /// server finds its share folder at the same place under `folder` (PostgreSQL locates it from
    /// its own binary), where every file is a link to the installed one but PL/Proxy's. Returns
    /// the binaries' folder and the server's major version.
    static func withoutPLProxy(in folder: URL) async throws -> (binaries: String, major: Int) {
        let installed = try EmbeddedPostgres.binaries(preferring: ProcessInfo.processInfo.environment["LEDGER_PG_BIN"])
        func config(_ flag: String) async throws -> String {
            try await ProcessRunner.check(installed + "/pg_config", [flag]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (bin, share, lib) = (try await config("--bindir"), try await config("--sharedir"), try await config("--pkglibdir"))
        let root = folder.appendingPathComponent("without-plproxy").path
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + bin, withIntermediateDirectories: true)
        for name in ["postgres", "initdb", "pg_ctl"] {
            let binary = URL(fileURLWithPath: bin + "/" + name).resolvingSymlinksInPath().path
            try fm.copyItem(atPath: binary, toPath: root + bin + "/" + name)
        }
        try fm.createDirectory(atPath: (root + lib as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: root + lib, withDestinationPath: lib)
        try fm.createDirectory(atPath: root + share + "/extension", withIntermediateDirectories: true)
        for name in try fm.contentsOfDirectory(atPath: share) where name != "extension" {
            try fm.createSymbolicLink(atPath: root + share + "/" + name, withDestinationPath: share + "/" + name)
        }
        for name in try fm.contentsOfDirectory(atPath: share + "/extension") where !name.hasPrefix("plproxy") {
            try fm.createSymbolicLink(atPath: root + share + "/extension/" + name, withDestinationPath: share + "/extension/" + name)
        }
        let version = try await ProcessRunner.check(root + bin + "/postgres", ["--version"])
        let number = version.split(separator: " ").first { $0.first?.isNumber == true } ?? ""
        return (root + bin, try #require(Int(number.split(separator: ".").first ?? ""), "\(version)"))
    }
}
