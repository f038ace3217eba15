import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One throwaway PostgreSQL cluster per test process (initdb into a temporary folder, on a
/// free port), a template database with the migrations applied, and a fresh copy of the
/// template for every test. The cluster stops when the test process exits.
public actor TestCluster {
    public static let shared = TestCluster()

    private var started: Task<DatabaseSettings, any Error>?
    private var counter = 0
    static let templateName = "ledger_template"
    let logger = Logger(label: "test-postgres")

    /// Settings of the maintenance database, starting the cluster on first use.
    public func maintenance() async throws -> DatabaseSettings {
        if started == nil {
            started = Task { try await Self.boot(logger: logger) }
        }
        return try await started!.value
    }

    /// A new database copied from the migrated template.
    public func makeDatabase() async throws -> DatabaseSettings {
        let settings = try await maintenance()
        counter += 1
        let name = "t_\(getpid())_\(counter)"
        // CREATE DATABASE ... TEMPLATE fails if another session uses the template; ours never does.
        try await PostgresAdmin.createDatabaseIfMissing(name, template: Self.templateName, on: settings, logger: logger)
        return settings.with(database: name)
    }

    /// An empty database with no migrations (for migration tests).
    public func makeEmptyDatabase() async throws -> DatabaseSettings {
        let settings = try await maintenance()
        counter += 1
        let name = "e_\(getpid())_\(counter)"
        try await PostgresAdmin.createDatabaseIfMissing(name, on: settings, logger: logger)
        return settings.with(database: name)
    }

    private static func boot(logger: Logger) async throws -> DatabaseSettings {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-test-\(getpid())-\(UUID().uuidString.prefix(8))")
        let embedded = EmbeddedPostgres(
            options: .init(
                dataDirectory: dir,
                // Throwaway data: skip fsync, keep everything else as in production.
                serverSettings: ["fsync": "off", "full_page_writes": "off", "max_connections": "2000"],
                database: "postgres", binaries: Setting.pgBin.value()),
            logger: logger)
        let settings = try await ClusterStarts.shared.run { try await embedded.start() }
        TestClusterCleanup.register(embedded: embedded, directory: dir)
        let template = settings.with(database: templateName)
        try await PostgresAdmin.createDatabaseIfMissing(templateName, on: settings, logger: logger)
        try await withClient(template) { client in
            try await Migrator(client: client, logger: logger).migrate()
        }
        return settings
    }
}

/// Stops the test cluster when the process exits (Swift Testing has no global teardown).
enum TestClusterCleanup {
    nonisolated(unsafe) static var stopCommand: [String] = []
    nonisolated(unsafe) static var directory: String = ""

    static func register(embedded: EmbeddedPostgres, directory: URL) {
        let pgCtl = (try? EmbeddedPostgres.binaries(preferring: Setting.pgBin.value())).map { $0 + "/pg_ctl" } ?? "pg_ctl"
        var command = [pgCtl, "stop", "-D", directory.appendingPathComponent("pg").path, "-m", "immediate", "-w"]
        if geteuid() == 0, let user = EmbeddedPostgres.systemUserName() {
            command = ["/usr/sbin/runuser", "-u", user, "--"] + command
        }
        stopCommand = command
        Self.directory = directory.path
        atexit {
            let command = TestClusterCleanup.stopCommand
            _ = ProcessRunner.runBlocking(command[0], Array(command.dropFirst()))
            try? FileManager.default.removeItem(atPath: TestClusterCleanup.directory)
        }
    }
}

/// Runs `body` with a running PostgresClient, closing it afterwards.
public func withClient<T: Sendable>(
    _ settings: DatabaseSettings, maxConnections: Int = 20, logger: Logger = Logger(label: "test-client"),
    _ body: @Sendable (PostgresClient) async throws -> T
) async throws -> T {
    try await settings.withClient(logger: logger, maxConnections: maxConnections, body)
}

/// A fresh migrated database and a store on it.
public func withTestStore<T: Sendable>(
    hooks: EventStore.Hooks = .init(),
    _ body: @Sendable (EventStore, PostgresClient, DatabaseSettings) async throws -> T
) async throws -> T {
    let settings = try await TestCluster.shared.makeDatabase()
    return try await withClient(settings) { client in
        let store = EventStore(client: client, logger: Logger(label: "test-store"), hooks: hooks)
        return try await body(store, client, settings)
    }
}

/// Polls `condition` until it holds or the deadline passes; a readiness wait, not a sleep.
public func waitUntil(
    timeout: Duration = .seconds(10), interval: Duration = .milliseconds(20), _ what: String = "condition",
    _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: interval)
    }
    if try await condition() { return }
    throw WaitTimeout(what: what)
}

public struct WaitTimeout: Error, CustomStringConvertible {
    public var what: String
    public var description: String { "timed out waiting for \(what)" }
}

/// An operation that never finishes and ignores cancellation, like a PostgresNIO query sent to
/// a closed connection: `forever()` parks its caller until `release()`.
public final class Hang: Sendable {
    /// Set once a caller is parked (or about to be).
    public let entered = Mutex(false)
    public let parked = Mutex<[CheckedContinuation<Void, Never>]>([])

    public init() {}

    public func forever() async {
        entered.withLock { $0 = true }
        await withCheckedContinuation { continuation in parked.withLock { $0.append(continuation) } }
    }

    /// Resumes every parked caller, once: releasing again (a test's cleanup after its own release)
    /// resumes only those parked since.
    public func release() {
        let waiting = parked.withLock { parked in
            defer { parked = [] }
            return parked
        }
        for continuation in waiting { continuation.resume() }
    }
}
