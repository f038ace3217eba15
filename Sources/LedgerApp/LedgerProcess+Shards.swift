import LedgerConfiguration
import LedgerPostgres
import LedgerShards
import LedgerStore
import Logging
import PostgresNIO
import ServiceLifecycle
import TransparencyLog

extension LedgerProcess {
    /// `serve` over the shards of `shardCluster`: the map read from its PL/Proxy definition in
    /// `database`, then one pool per shard (the same login, the shard's host and database), each
    /// checked as a single store is, and each shard's services (`RoleServices.sharded`) beside
    /// every process's pool metrics and watchdog, for each pool, and whether it answers
    /// (`DatabaseAvailability`, which the router asks).
    func withShardPools<T: Sendable>(logger: Logger, _ body: @Sendable (PostgresClient, Services) async throws -> T) async throws -> T {
        guard let cluster = shardCluster, role == .serve, standby == nil, witnesses == nil else {
            throw Incomplete(
                description: "a ledger on shards runs as `ledger serve` alone, with no read standby and no witnesses yet (docs/SCALING.md)")
        }
        let map = try await database.withClient(logger: logger) { try await ShardCluster.map(server: cluster, client: $0, logger: logger) }
        let settings = try map.shards.map { try ShardConnection.settings($0, login: database) }
        let signers = try signer.map { try RoleServices.shardSigners($0, count: map.shards.count) }
        for (index, signer) in (signers ?? []).enumerated() {
            logger.info("shard log", metadata: ["shard": "\(index)", "origin": "\(signer.name)", "verifierKey": "\(signer.verifier.text)"])
        }
        let clients = settings.map { $0.makeClient(logger: logger, maxConnections: maxConnections, applicationName: applicationName) }
        return try await Self.running(clients[...], logger: logger) {
            for client in clients { try await check(client, logger: logger) }
            return try await body(clients[0]) { onRunning in
                let availability = clients.enumerated().map { DatabaseAvailability(client: $1, shard: $0, logger: logger) }
                let always = zip(clients, settings).flatMap { client, settings in
                    [
                        DatabasePoolMetrics(
                            client: client, applicationName: applicationName, maxConnections: maxConnections, logger: logger),
                        DatabaseWatchdog(
                            client: client, logger: logger, onWedged: onWedged, reachable: Self.reachable(settings, logger: logger)),
                    ] as [any Service]
                }
                let shards = zip(clients, availability).map { client, availability in
                    RoleServices.Shard(client: client, store: EventStore(client: client, logger: logger), availability: availability)
                }
                return always + availability
                    + RoleServices.sharded(
                        shards: shards, map: map, authority: authority!, configuration: configuration, signers: signers,
                        publishedFile: configuration.checkpointFileURL, deliveries: deliveries, logger: logger, onRunning: onRunning)
            }
        }
    }

    /// Whether the shard takes a new connection (for its watchdog: one shard down is not a wedged
    /// pool, and a restart for it would stop every shard's service).
    static func reachable(_ settings: DatabaseSettings, logger: Logger) -> @Sendable () async -> Bool {
        {
            (try? await withDeadline(.seconds(5), "a new connection to the shard") {
                try await PostgresAdmin.withConnection(settings, logger: logger) { _ in }
            }) != nil
        }
    }

    /// `body` while every pool of `clients` runs.
    static func running<T: Sendable>(
        _ clients: ArraySlice<PostgresClient>, logger: Logger, _ body: () async throws -> T
    ) async throws -> T {
        guard let first = clients.first else { return try await body() }
        return try await withBackground(first.run, logger: logger) { try await running(clients.dropFirst(), logger: logger, body) }
    }
}
