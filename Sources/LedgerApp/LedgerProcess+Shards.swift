import LedgerConfiguration
import LedgerPostgres
import LedgerShards
import LedgerStore
import Logging
import PostgresNIO
import ServiceLifecycle
import TransparencyLog

extension LedgerProcess {
    /// `serve` over the shards of `shardCluster`: a pool on `database`, where the cluster is
    /// defined and the top log is kept, and the map read from its PL/Proxy definition; then one
    /// pool per shard (the same login, the shard's host and database), each checked as a single
    /// store is, and each shard's services (`RoleServices.sharded`) beside every process's pool
    /// metrics and watchdog, and whether it answers (`DatabaseAvailability`, which the router asks).
    func withShardPools<T: Sendable>(logger: Logger, _ body: @Sendable (PostgresClient, Services) async throws -> T) async throws -> T {
        guard let cluster = shardCluster, role == .serve, standby == nil else {
            throw Incomplete(description: "a ledger on shards runs as `ledger serve` alone, with no read standby yet (docs/SCALING.md)")
        }
        let top = database.makeClient(logger: logger, maxConnections: 10, applicationName: applicationName)
        return try await withBackground(top.run, logger: logger) {
            try await check(top, logger: logger)
            let map = try await ShardCluster.map(server: cluster, client: top, logger: logger)
            return try await withShards(map: map, top: top, logger: logger, body)
        }
    }

    /// The shards' pools, running and checked, and the services over them and `top`.
    private func withShards<T: Sendable>(
        map: ShardMap, top: PostgresClient, logger: Logger, _ body: @Sendable (PostgresClient, Services) async throws -> T
    ) async throws -> T {
        let settings = try map.shards.map { try ShardConnection.settings($0, login: database) }
        // Shards are told apart by where they are, not by how their strings spell it: two strings
        // naming one database would run its workers twice, and the top log's database is no shard.
        let places = ([database] + settings).map(ShardConnection.place)
        guard Set(places).count == places.count else {
            throw Incomplete(
                description: "\(shardCluster!): two partitions' shards, or a shard and the ledger's own database, are one database")
        }
        let logs = try signer.map { try RoleServices.ShardLogs(signer: $0, witnesses: witnesses, count: map.shards.count) }
        for (index, signer) in (logs?.shards ?? []).enumerated() {
            logger.info("shard log", metadata: ["shard": "\(index)", "origin": "\(signer.name)", "verifierKey": "\(signer.verifier.text)"])
        }
        // The process's pool budget shared by its shards, as one database has it whole: a pool of
        // the whole for each would outgrow a server's max_connections (100 by default, the
        // embedded cluster's, which holds every shard) from three shards on.
        let perShard = max(5, maxConnections / settings.count)
        let clients = settings.map { $0.makeClient(logger: logger, maxConnections: perShard, applicationName: applicationName) }
        return try await Self.running(clients[...], logger: logger) {
            for client in clients { try await check(client, logger: logger) }
            let sources = try await ShardHoldings.sources(of: map, clients: clients, logger: logger)
            return try await body(clients[0]) { onRunning in
                // Whether each shard's server answers a new connection: its availability and its
                // watchdog ask the same.
                let reachable = settings.map { Self.reachable($0, logger: logger) }
                let availability = zip(clients, reachable).enumerated().map { index, shard in
                    DatabaseAvailability(client: shard.0, shard: "\(index)", reachable: shard.1, logger: logger)
                }
                let topReachable = Self.reachable(database, logger: logger)
                let topAvailability = DatabaseAvailability(client: top, shard: "top", reachable: topReachable, logger: logger)
                let topWatchdog = DatabaseWatchdog(client: top, logger: logger, onWedged: onWedged, reachable: topReachable)
                // Each shard's own figures in /metrics carry its `shard` (`ShardMetrics`).
                let loggers = clients.indices.map { index in
                    var logger = logger
                    logger[metadataKey: "shard"] = "\(index)"
                    return logger
                }
                var always: [any Service] = [topWatchdog]
                for (index, client) in clients.enumerated() {
                    always += [
                        DatabasePoolMetrics(
                            client: client, applicationName: applicationName, maxConnections: perShard, logger: loggers[index]),
                        DatabaseWatchdog(client: client, logger: logger, onWedged: onWedged, reachable: reachable[index]),
                    ]
                }
                let shards = clients.indices.map { index in
                    RoleServices.Shard(
                        client: clients[index], store: EventStore(client: clients[index], logger: loggers[index]),
                        availability: availability[index])
                }
                return always + availability + [topAvailability]
                    + RoleServices.sharded(
                        shards: shards, top: top, topAvailability: topAvailability, map: map, authority: authority!,
                        configuration: configuration, logs: logs, sources: sources,
                        publishedFile: configuration.checkpointFileURL, deliveries: deliveries, logger: logger, onRunning: onRunning)
            }
        }
    }

    /// Whether the shard's server answers a new connection (for its watchdog: one shard down is
    /// not a wedged pool, and a restart for it would stop every shard's service). A server that
    /// answers with an error (too many connections, say) is up: hung probes then are a wedge.
    static func reachable(_ settings: DatabaseSettings, logger: Logger) -> @Sendable () async -> Bool {
        {
            do {
                try await withDeadline(.seconds(5), "a new connection to the shard") {
                    try await PostgresAdmin.withConnection(settings, logger: logger) { _ in }
                }
                return true
            } catch let error as PSQLError where error.code == .server {
                // Up, unless it is still starting or recovering (57P03, cannot_connect_now).
                return error.serverInfo?[.sqlState] != "57P03"
            } catch {
                return false
            }
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
