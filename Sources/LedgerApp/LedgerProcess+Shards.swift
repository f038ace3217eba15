import LedgerConfiguration
import LedgerPostgres
import LedgerShards
import LedgerStore
import Logging
import PostgresNIO
import ServiceLifecycle
import TransparencyLog

extension LedgerProcess {
    /// `serve` over the shards of `shardCluster`, defined in `database`, where the top log is
    /// kept: its map read from PL/Proxy's definition, one pool per shard (the same login, the
    /// shard's host and database, the process's pool budget shared), each checked as a single
    /// store is, then the shards' services (`shardServices`).
    func withShards<T: Sendable>(
        cluster: String, logger: Logger, _ body: @Sendable (PostgresClient, Services) async throws -> T
    ) async throws -> T {
        guard role == .serve, standby == nil else {
            throw Incomplete(description: "a ledger on shards runs as `ledger serve` alone, with no read standby yet (docs/SCALING.md)")
        }
        let top = database.makeClient(logger: logger, maxConnections: 10, applicationName: applicationName)
        return try await withBackground(top.run, logger: logger) {
            try await check(top, logger: logger)
            let map = try await ShardCluster.map(server: cluster, client: top, logger: logger)
            let settings = try map.shards.map { try ShardConnection.settings($0, login: database) }
            // Shards are told apart by where they are, not by how their strings spell it: two strings
            // naming one database would run its workers twice, and the top log's database is no shard.
            let places = ([database] + settings).map(ShardConnection.place)
            guard Set(places).count == places.count else {
                throw Incomplete(
                    description: "\(cluster): two partitions' shards, or a shard and the ledger's own database, are one database")
            }
            // The process's pool budget shared by its shards, as one database has it whole: a pool
            // of the whole for each would outgrow a server's max_connections (100 by default, the
            // embedded cluster's, which holds every shard) from three shards on.
            let logs = try signer.map { try RoleServices.ShardLogs(signer: $0, witnesses: witnesses, count: settings.count) }
            for (index, signer) in (logs?.shards ?? []).enumerated() {
                logger.info(
                    "shard log", metadata: ["shard": "\(index)", "origin": "\(signer.name)", "verifierKey": "\(signer.verifier.text)"])
            }
            let perShard = max(5, maxConnections / settings.count)
            let clients = settings.map { $0.makeClient(logger: logger, maxConnections: perShard, applicationName: applicationName) }
            return try await Self.running(clients[...], logger: logger) {
                let joins = settings.indices.map { index in
                    ShardJoin(index: index, reach: Self.reach(settings[index], logger: logger), logger: logger) {
                        try await joinChecks(index, map: map, clients: clients, logger: logger)
                    }
                }
                // Every shard that answers joins before the server listens, as one database is
                // checked before it serves; the others are refused until they join (`ShardJoin`).
                // A shard that refuses is known at once; one silent, or whose checks outlast 60 s (a
                // migration waiting on a lock), joins when its try ends (`ShardJoin.starting`).
                await withTaskGroup(of: Void.self) { group in
                    for join in joins { group.addTask { await join.starting(patience: .seconds(60)) } }
                }
                let front = Front(map: map, top: top, settings: settings, joins: joins, logs: logs)
                return try await body(clients[0]) { onRunning in
                    shardServices(clients, perShard: perShard, front: front, standby: nil, logger: logger, onRunning: onRunning)
                }
            }
        }
    }

    /// What shard `index` passes before it serves: migrated by `shardOwner` (if set), the checks
    /// every process makes of its database (`check`), and its holdings against the map (its
    /// source, `ShardHoldings.source`).
    func joinChecks(_ index: Int, map: ShardMap, clients: [PostgresClient], logger: Logger) async throws -> Int? {
        let logger = {
            var named = logger
            named[metadataKey: "shard"] = "\(index)"
            return named
        }()
        if let shardOwner {
            let owner = try ShardConnection.settings(map.shards[index], login: shardOwner)
            let applied = try await DatabaseFailure.explaining("migrating shard \(index)", on: owner) {
                try await owner.withClient(logger: logger) { try await Migrator(client: $0, logger: logger).migrate() }
            }
            if !applied.isEmpty { logger.info("migrations applied", metadata: ["names": "\(applied)"]) }
        }
        // On connections of its own: the pool, unused until the shard joins, is left untried.
        let own = try ShardConnection.settings(map.shards[index], login: database)
        return try await own.withClient(logger: logger, maxConnections: 2) { client in
            try await check(client, logger: logger)
            var clients = clients
            clients[index] = client
            return try await ShardHoldings.source(of: index, map: map, clients: clients, logger: logger)
        }
    }

    /// What several shards add to `serve`: the map, the top log's pool, where each shard is, and
    /// whether each has joined.
    struct Front: Sendable {
        var map: ShardMap
        var top: PostgresClient
        var settings: [DatabaseSettings]
        /// Each shard's join (`ShardJoin`): refused until it passes its checks.
        var joins: [ShardJoin]
        /// The shards' and the top log's signers, with a signing key.
        var logs: RoleServices.ShardLogs?
    }

    /// `serve`'s services over its shards, one database (`front` nil) or several, the one way
    /// they are put together: each shard's pool metrics and watchdog, on several shards whether
    /// each database answers (`DatabaseAvailability`, which the front asks; one shard down is not
    /// a wedged pool) and the top log's, then the shards' own (`RoleServices.serve`).
    func shardServices(
        _ clients: [PostgresClient], perShard: Int, front: Front?, standby: PostgresClient?, logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void
    ) -> [any Service] {
        var always: [any Service] = []
        var shards: [RoleServices.Shard] = []
        for (index, client) in clients.enumerated() {
            // Each shard's own figures in /metrics and its log lines carry its `shard`
            // (`ShardMetrics`); one database's carry none.
            var named = logger
            if front != nil { named[metadataKey: "shard"] = "\(index)" }
            let reach = front.map { $0.joins[index].reach }  // the one its join asks
            let reachable = reach.map { reach in { @Sendable in await reach() == .answers } }
            let availability = reach.map {
                DatabaseAvailability(client: client, shard: "\(index)", misses: availabilityMisses, reach: $0, logger: logger)
            }
            // On shards the watchdog and availability probe the pool once the shard joins (`ShardJoin`).
            let monitors: [any Service] =
                [DatabaseWatchdog(client: client, logger: named, onWedged: onWedged, reachable: reachable)]
                + (availability.map { [$0] } ?? [])
            always.append(DatabasePoolMetrics(client: client, applicationName: applicationName, maxConnections: perShard, logger: named))
            let join = front?.joins[index]
            if join == nil { always += monitors }
            shards.append(
                .init(
                    client: client, store: EventStore(client: client, logger: named), availability: availability, join: join,
                    monitors: join == nil ? [] : monitors))
        }
        var cluster: RoleServices.Cluster?
        if let front {
            let reach = Self.reach(database, logger: logger)
            let reachable = { @Sendable in await reach() == .answers }
            var named = logger
            named[metadataKey: "shard"] = "top"
            let availability = DatabaseAvailability(
                client: front.top, shard: "top", misses: availabilityMisses, reach: reach, logger: logger)
            always += [DatabaseWatchdog(client: front.top, logger: named, onWedged: onWedged, reachable: reachable), availability]
            cluster = .init(map: front.map, top: front.top, topAvailability: availability)
        }
        let logs = front.map(\.logs) ?? signer.map { RoleServices.ShardLogs(single: $0, witnesses: witnesses) }
        return always
            + RoleServices.serve(
                shards: shards, cluster: cluster, authority: authority!, configuration: configuration, logs: logs,
                publishedFile: configuration.checkpointFileURL, deliveries: deliveries, engine: engine, standby: standby,
                logger: logger, onRunning: onRunning)
    }

    /// What a new connection to the shard's server finds now, outside the pool: a working one
    /// (`SELECT 1` answered), a refusal (any error), or silence past 5 s. Its availability refuses
    /// its requests at once on a refusal, and its watchdog restarts nothing unless it answers (a
    /// pool that hangs while the server refuses or is silent is no wedge, and a restart would stop
    /// every other shard's service for nothing).
    ///
    /// The connect's own timeout lies past the deadline: a connection too slow to open (a hung
    /// server, or a machine stalled for seconds) is silence, a miss, never a refusal. With the two
    /// equal, a stall of the whole machine once refused a sound shard at once.
    static func reach(_ settings: DatabaseSettings, logger: Logger) -> @Sendable () async -> Reach {
        {
            do {
                try await withDeadline(.seconds(5), "a new connection to the shard") {
                    try await settings.answerOnce(connectTimeout: .seconds(30), logger: logger)
                }
                return .answers
            } catch is DeadlineExceeded {
                return .silent
            } catch {
                return .refuses
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
