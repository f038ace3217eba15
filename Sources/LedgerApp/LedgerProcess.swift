import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import LedgerTokens
import LedgerWebhooks
import Logging
import PostgresNIO
import ServiceLifecycle
import TransparencyLog
import UnixSignals

/// One ledger process, the only way one is put together: `ledger serve` and every role, the
/// tests against a live server, the demo and the benchmarks all run this. On its own pools
/// (named `ledger <role> <pid>` in `pg_stat_activity`) it checks what every process checks (the
/// schema is current; public entries only on a log that allows them), then runs the role's
/// services (`RoleServices`) beside what every process runs: the pool's metrics and the
/// database watchdog.
public struct LedgerProcess: Sendable {
    public enum Role: String, Sendable, CaseIterable {
        /// Everything in one process.
        case serve
        /// The HTTP API alone; proofs are decided by `verifier` processes.
        case api
        case verifier
        /// Projectors and the expiry service.
        case project
        case deliver
        case checkpointer

        /// Roles that serve HTTP, and so check tokens.
        public var servesHTTP: Bool { self == .serve || self == .api }
    }

    /// A process refused before it serves: its role lacks what it cannot run without (said before
    /// anything connects), or the log's format refuses its settings (public entries).
    public struct Incomplete: Error, CustomStringConvertible {
        public var description: String
    }

    public var role: Role
    public var configuration: LedgerConfiguration
    /// The services' login (least privilege: a member of `ledger_service`, not the owner).
    public var database: DatabaseSettings
    /// A hot standby for the API's reads (`LEDGER_READ_DATABASE_URL`), if any.
    public var standby: DatabaseSettings?
    /// The tokens the HTTP roles accept.
    public var authority: TokenAuthority?
    /// The checkpointer's key: required by `checkpointer`; `serve` without one runs no checkpointer.
    public var signer: NoteSigner?
    public var witnesses: WitnessPolicy?
    public var deliveries = WebhookDeliverer.Settings()
    /// `serve`'s proof engines (tests set their settings and hooks).
    public var engine = RoleServices.Engine()
    public var maxConnections = 40
    /// On shards: how many silent checks in a row say a shard down (`DatabaseAvailability`; a
    /// refusal says it at once). Two in production; tests of other things on a machine that
    /// stalls for seconds under every suite at once raise it.
    public var availabilityMisses = 2
    /// The PL/Proxy cluster (`LEDGER_SHARD_CLUSTER`) whose shards hold the collaborations, defined
    /// in `database`; nil: `database` holds them all. `serve` only (docs/SCALING.md).
    public var shardCluster: String?
    /// The login that migrates each shard as it joins (`ShardJoin`; `ledger serve` migrates with
    /// its owning credentials); nil: each shard's schema must already be current.
    public var shardOwner: DatabaseSettings?
    /// What the database watchdog does when the pool is wedged: exit for a supervisor's restart.
    public var onWedged: @Sendable () -> Void = { exit(DatabaseWatchdog.exitStatus) }

    public init(
        _ role: Role, configuration: LedgerConfiguration, database: DatabaseSettings, standby: DatabaseSettings? = nil,
        authority: TokenAuthority? = nil, signer: NoteSigner? = nil, witnesses: WitnessPolicy? = nil
    ) {
        self.role = role
        self.configuration = configuration
        self.database = database
        self.standby = standby
        self.authority = authority
        self.signer = signer
        self.witnesses = witnesses
    }

    /// `application_name` of the process's connections: what `DatabasePoolMetrics` counts.
    public var applicationName: String { "ledger \(role.rawValue) \(ProcessInfo.processInfo.processIdentifier)" }

    /// A process serving HTTP, as its caller sees it.
    public struct Running: Sendable {
        public let port: Int
        /// The process's own pool.
        public let client: PostgresClient
        public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    }

    /// Runs until SIGTERM or SIGINT (the CLI). The services then stop in reverse order: HTTP
    /// server first, workers next; in-flight work gets 30 s, then is cancelled (a transaction cut
    /// short rolls back: nothing half-done remains).
    public func run(logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await withPools(logger: logger) { _, services in
            var group = ServiceGroupConfiguration(
                services: services(onRunning).map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            group.maximumGracefulShutdownDuration = .seconds(30)
            group.maximumCancellationDuration = .seconds(5)
            try await ServiceGroup(configuration: group).run()
        }
    }

    /// Runs while `body` does, then shuts down (tests, the demo, benchmarks). HTTP roles only:
    /// `body` gets the port once the server listens.
    public func serving<T: Sendable>(logger: Logger, _ body: @Sendable (Running) async throws -> T) async throws -> T {
        guard role.servesHTTP else { throw Incomplete(description: "`serving` needs a role that serves HTTP, not \(role.rawValue)") }
        return try await withPools(logger: logger) { client, services in
            try await Self.serving(logger: logger, services) { port in try await body(Running(port: port, client: client)) }
        }
    }

    /// The services of a process, given the callback its HTTP server calls with its port.
    typealias Services = @Sendable (@escaping @Sendable (Int) async -> Void) -> [any Service]

    /// The process's pools, running, once the checks pass, and its services over them: on one
    /// database, or on the shards of `shardCluster` (`withShards`). `body` gets the pool
    /// `Running` names (the first shard's).
    func withPools<T: Sendable>(logger: Logger, _ body: @Sendable (PostgresClient, Services) async throws -> T) async throws -> T {
        if role.servesHTTP && authority == nil { throw Incomplete(description: "`ledger \(role.rawValue)` needs a token authority") }
        if role == .checkpointer && signer == nil { throw Incomplete(description: "`ledger checkpointer` needs a signing key") }
        if let cluster = shardCluster { return try await withShards(cluster: cluster, logger: logger, body) }
        let client = database.makeClient(logger: logger, maxConnections: maxConnections, applicationName: applicationName)
        let standby = standby?.makeClient(logger: logger, maxConnections: maxConnections, applicationName: applicationName)
        func checked() async throws -> T {
            try await check(client, logger: logger)
            return try await body(client) { onRunning in services(client: client, standby: standby, logger: logger, onRunning: onRunning) }
        }
        return try await withBackground(client.run, logger: logger) {
            guard let standby else { return try await checked() }
            return try await withBackground(standby.run, logger: logger) { try await checked() }
        }
    }

    /// What every process checks of its database: the schema is current; public entries only on
    /// a log that allows them.
    func check(_ client: PostgresClient, logger: Logger) async throws {
        try await Migrator(client: client, logger: logger).ensureCurrent()
        if configuration.publicEntries, let refusal = try await PrivacyFormat(client: client, logger: logger).publicEntriesRefusal() {
            throw Incomplete(description: refusal)
        }
    }

    /// What every process runs, then the role's services (`RoleServices`, in the order a
    /// ServiceGroup stops them in reverse).
    func services(
        client: PostgresClient, standby: PostgresClient?, logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void
    ) -> [any Service] {
        let store = EventStore(client: client, logger: logger)
        let always: [any Service] = [
            DatabasePoolMetrics(client: client, applicationName: applicationName, maxConnections: maxConnections, logger: logger),
            DatabaseWatchdog(client: client, logger: logger, onWedged: onWedged),
        ]
        let role: [any Service]
        switch self.role {
        case .serve:
            // Its shards' services, one here, its pool's metrics and watchdog among them (`shardServices`).
            return shardServices([client], perShard: maxConnections, front: nil, standby: standby, logger: logger, onRunning: onRunning)
        case .api:
            role = RoleServices.apiOnly(
                client: client, store: store, authority: authority!, configuration: configuration, standby: standby, logger: logger,
                onRunning: onRunning)
        case .verifier:
            role = RoleServices.verifier(client: client, configuration: configuration, logger: logger)
        case .project:
            role = RoleServices.projector(client: client, store: store, configuration: configuration, logger: logger)
        case .deliver:
            role = RoleServices.deliverer(
                client: client, store: store, configuration: configuration, deliveries: deliveries, logger: logger)
        case .checkpointer:
            role = RoleServices.checkpointer(
                client: client, signer: signer!, witnesses: witnesses, publishedFile: configuration.checkpointFileURL, logger: logger)
        }
        return always + role
    }
}
