import ArgumentParser
import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import LedgerTokens
import Logging
import PostgresNIO
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The reliability suite: the ledger's roles as separate processes on a real PostgreSQL, a
/// steady write and proof load over HTTP, and faults in the middle of it; then every
/// acknowledged write is looked up in the log, every proof request must have exactly one
/// verdict, the views must equal the domain's fold of the log, and `ledger log verify` must pass.
@main
struct Reliability: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-reliability",
        abstract: "Load the ledger, kill -9 a projector, a verifier and `ledger serve`, crash PostgreSQL, then count what was lost.")

    @Option(help: "Seconds of load; the kills come at a quarter, the database crash at half.") var duration: Double = 40
    @Option(help: "Concurrent writers, each playing whole life cycles.") var writers: Int = 8
    @Option(help: "Seconds PostgreSQL stays down.") var outage: Double = 2
    @Option(help: "The ledger executable (default: next to this one).") var ledger: String?
    @Flag(help: "Keep the run's folder (logs, database) even when everything passed.") var keep = false

    func run() async throws {
        var logger = Logger(label: "reliability")
        logger.logLevel = .warning
        let ledgerPath = ledger ?? Self.sibling("ledger")
        guard FileManager.default.isExecutableFile(atPath: ledgerPath) else {
            throw ValidationError("no ledger executable at \(ledgerPath); build it (swift build) or pass --ledger")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-reliability-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        say("run folder \(folder.path)")

        let postgres = EmbeddedPostgres(
            options: .init(dataDirectory: folder.appendingPathComponent("db"), binaries: Setting.pgBin.value()), logger: logger)
        let settings = try await postgres.start()
        let secret = TokenAuthority.randomSecret()
        let port = try EmbeddedPostgres.freePort()
        let servePort = try EmbeddedPostgres.freePort()
        // The roles' settings; the log level is the caller's, else notice.
        let roles = RoleProcesses(
            ledger: ledgerPath, folder: folder,
            environment: [
                Setting.databaseURL.variable: settings.url(revealPassword: true), Setting.jwtSecret.variable: secret,
                Setting.dataDir.variable: folder.appendingPathComponent("data").path,
                Setting.logLevel.variable: Setting.logLevel.value() ?? "notice",
            ])
        var passed = false
        do {
            passed = try await exercise(
                roles: roles, postgres: postgres, settings: settings, secret: secret, ports: (port, servePort), logger: logger)
        } catch {
            say("the suite itself failed: \(error)")
        }
        // Reported, not failed: a role still busy 35 s after SIGTERM is ended by ServiceLifecycle's
        // cancellation timeout (before the API abandoned stuck handlers, an API request waiting
        // on a pooled PostgresNIO query to a connection closed in the crash did that). Nothing
        // is lost by it; the counts above are the verdict.
        let unclean = await roles.stopAll()
        if !unclean.isEmpty { say("roles that did not stop cleanly on SIGTERM: \(unclean.joined(separator: ", "))") }
        try? await postgres.stop()
        if passed && !keep {
            try? FileManager.default.removeItem(at: folder)
        } else {
            say("logs and database kept in \(folder.path)")
        }
        guard passed else { throw ExitCode(1) }
    }

    func exercise(
        roles: RoleProcesses, postgres: EmbeddedPostgres, settings: DatabaseSettings, secret: String, ports: (api: Int, serve: Int),
        logger: Logger
    ) async throws -> Bool {
        let migrated = try await roles.runToEnd(["migrate"])
        guard migrated.status == 0 else { throw ValidationError("ledger migrate failed: \(migrated.output)") }
        try roles.start("api", ["api", "--port", String(ports.api)])
        // Half the writers go through `ledger serve`, which decides proofs in groups itself.
        try roles.start("serve", ["serve", "--port", String(ports.serve)])
        for name in ["projector-1", "projector-2"] { try roles.start(name, ["project"]) }
        for name in ["verifier-1", "verifier-2"] { try roles.start(name, ["verifier"]) }
        let baseURLs = [ports.api, ports.serve].map { URL(string: "http://127.0.0.1:\($0)")! }
        let authority = try await TokenAuthority(secret: secret)
        let tally = Tally()
        let load = LoadGenerator(baseURLs: baseURLs, authority: authority, tally: tally)
        for (url, name) in zip(baseURLs, ["api", "serve"]) {
            guard await waitUntilReady(load.client("probe", via: url), deadline: .now + .seconds(60)) else {
                throw ValidationError("\(name) did not become ready; see \(name).log")
            }
        }
        say("roles up: api, serve, 2 projectors, 2 verifiers; \(writers) writers for \(Int(duration)) s")

        let supervisor = Task { await roles.supervise() }
        defer { supervisor.cancel() }
        let started = ContinuousClock.now
        let end = started + .milliseconds(Int64(duration * 1000))
        let faults = Faults()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await load.run(writers: writers, until: end) }
            group.addTask {
                try await Task.sleep(until: started + .milliseconds(Int64(duration * 250)))
                let projector = await roles.kill9("projector-1")
                let verifier = await roles.kill9("verifier-1")
                let serve = await roles.kill9("serve")
                say(
                    "kill -9 projector-1 (pid \(projector.map(String.init) ?? "-")), verifier-1 (pid \(verifier.map(String.init) ?? "-")) "
                        + "and serve (pid \(serve.map(String.init) ?? "-")) at \(elapsed(started))")
                faults.record("kill -9 projector, verifier and serve at \(elapsed(started))")
                try await Task.sleep(for: .seconds(1))
                try roles.start("projector-1", ["project"])
                try roles.start("verifier-1", ["verifier"])
                try roles.start("serve", ["serve", "--port", String(ports.serve)])
                try await Task.sleep(until: started + .milliseconds(Int64(duration * 500)))
                say("PostgreSQL: immediate shutdown at \(elapsed(started)), down \(outage) s")
                try await postgres.restartImmediately(downFor: .milliseconds(Int64(outage * 1000)))
                faults.record("PostgreSQL immediate restart at \(elapsed(started))")
                say("PostgreSQL back at \(elapsed(started))")
            }
            try await group.waitForAll()
        }
        let counts = tally.counts.withLock { $0 }
        let acks = tally.acks.withLock { $0 }
        say("load done: \(acks.count) writes acknowledged, \(counts.unacknowledged) life cycles cut short by the faults")

        return try await settings.withClient(logger: logger, maxConnections: 4) { client in
            let checks = Checks(client: client, store: EventStore(client: client, logger: logger), logger: logger)
            let drained = await checks.drain(deadline: .now + .seconds(120))
            if !drained { say("WARNING: proofs or projections still behind after 120 s") }
            let result = try await checks.run(
                acks: acks, pending: tally.pending.withLock { $0 }, api: { load.client($0) })
            let verify = try await roles.runToEnd(["log", "verify"])
            supervisor.cancel()
            return report(
                result: result, counts: counts, acks: acks.count, pending: tally.pending.withLock { $0.count },
                logVerify: verify, restarts: roles.restarts.withLock { $0 }, faults: faults.all())
        }
    }

    func report(
        result: Checks.Result, counts: Tally.Counts, acks: Int, pending: Int, logVerify: ProcessRunner.Output,
        restarts: [(name: String, status: Int32)], faults: [String]
    ) -> Bool {
        // A role may exit only through its database watchdog (a wedged pool), to be restarted.
        let watchdog = restarts.filter { $0.status == DatabaseWatchdog.exitStatus }
        let crashed = restarts.filter { $0.status != DatabaseWatchdog.exitStatus }
        let logOK = logVerify.status == 0
        let rows: [(String, String, Bool)] = [
            ("faults injected", faults.joined(separator: "; "), faults.count == 2),
            ("events in the log", String(result.events), true),
            ("writes acknowledged", String(acks), acks > 0),
            ("life cycles cut short (unacknowledged)", String(counts.unacknowledged), true),
            ("proof requests stored", String(result.proofRequests), result.proofRequests > 0),
            ("proofs answered 202, checked later", String(pending), true),
            ("tampered proofs refused", String(counts.rejectedAsExpected), counts.rejectedAsExpected > 0),
            ("acknowledged writes lost", String(result.lost.count), result.lost.isEmpty),
            ("undecided proofs", String(result.undecided + result.pendingStillPending), result.undecided + result.pendingStillPending == 0),
            ("proof requests without exactly one verdict", String(result.verdictsNotOne), result.verdictsNotOne == 0),
            ("views diverged", String(result.diverged), result.diverged == 0),
            ("tampered proofs granted", String(counts.tamperedGranted), counts.tamperedGranted == 0),
            ("unexpected refusals", String(counts.unexpectedRefusals.count), counts.unexpectedRefusals.isEmpty),
            ("roles restarted after their watchdog exit", watchdog.isEmpty ? "0" : watchdog.map(\.name).joined(separator: ", "), true),
            (
                "roles that crashed", crashed.isEmpty ? "0" : crashed.map { "\($0.name) (exit \($0.status))" }.joined(separator: ", "),
                crashed.isEmpty
            ),
            ("ledger log verify", logOK ? "OK" : "FAILED", logOK),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        print("\nreliability suite")
        for (name, value, ok) in rows {
            print("  \(ok ? "  " : "✗ ")\(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(value)")
        }
        for line in result.lost.prefix(10) { print("  lost: \(line)") }
        for line in result.divergence.prefix(10) { print("  diverged: \(line)") }
        for line in counts.unexpectedRefusals.prefix(10) { print("  refused: \(line)") }
        if !logOK { print("  log verify: \(logVerify.output.trimmingCharacters(in: .whitespacesAndNewlines))") }
        let passed = rows.allSatisfy(\.2)
        print(passed ? "PASSED" : "FAILED")
        return passed
    }

    func waitUntilReady(_ client: LedgerClient, deadline: ContinuousClock.Instant) async -> Bool {
        while ContinuousClock.now < deadline {
            if await client.isReady() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// `name` in the folder of this executable.
    static func sibling(_ name: String) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
    }
}

/// The faults as they happened, for the report.
final class Faults: Sendable {
    private let lines = Mutex<[String]>([])
    func record(_ line: String) { lines.withLock { $0.append(line) } }
    func all() -> [String] { lines.withLock { $0 } }
}

func say(_ line: String) {
    FileHandle.standardError.write(Data("reliability: \(line)\n".utf8))
}

func elapsed(_ start: ContinuousClock.Instant) -> String {
    let d = ContinuousClock.now - start
    return String(format: "%.1f s", d.seconds)
}
