import Foundation
import Hummingbird
import LedgerAPI
import LedgerConfiguration
import LedgerDomain
import LedgerFeed
import LedgerLog
import LedgerPostgres
import LedgerShardFront
import LedgerShards
import LedgerStore
import LedgerTokens
import LedgerWebhooks
import Logging
import PostgresNIO
import ServiceLifecycle
import TransparencyLog

extension RoleServices {
    /// A shard as `serve` runs it: its pool, its store, whether its database answers, and whether
    /// it has joined (`ShardJoin`: its services wait for it). Both nil on one database, whose
    /// router is asked whatever its database does, checked before it serves, as one database always was.
    public struct Shard: Sendable {
        public var client: PostgresClient
        public var store: EventStore
        public var availability: DatabaseAvailability?
        public var join: ShardJoin?
        /// What watches its pool (its watchdog and availability), run with its services once it joins.
        public var monitors: [any Service]

        public init(
            client: PostgresClient, store: EventStore, availability: DatabaseAvailability? = nil, join: ShardJoin? = nil,
            monitors: [any Service] = []
        ) {
            (self.client, self.store, self.availability, self.join, self.monitors) = (client, store, availability, join, monitors)
        }

        /// Whether the front may send it requests now.
        var serves: Bool { (join?.isJoined ?? true) && (availability?.isAvailable ?? true) }
    }

    /// What several shards add (docs/SCALING.md): the map that places collaborations, and the top
    /// log's database (where the cluster is defined) and whether it answers.
    public struct Cluster: Sendable {
        public var map: ShardMap
        public var top: PostgresClient
        public var topAvailability: DatabaseAvailability

        public init(map: ShardMap, top: PostgresClient, topAvailability: DatabaseAvailability) {
            (self.map, self.top, self.topAvailability) = (map, top, topAvailability)
        }
    }

    /// `ledger serve`, on one database or several shards, one composition: each shard's store
    /// runs what a store needs (`StoreServices`), the change feed's tail and its own API router
    /// (`buildRouter`; starts take only ids its shard holds), and with `logs` its checkpointer;
    /// on several shards the top log, on `cluster.top`, records every shard's checkpoints
    /// (`TopLogRecorder`) and is checkpointed and witnessed as the deployment's origin. One HTTP
    /// server sends each request to its shard (`ShardRouter`; with one shard, to that shard's
    /// router as it came). `standby`: a hot standby for the reads, on one database.
    public static func serve(
        shards: [Shard], cluster: Cluster?, authority: TokenAuthority, configuration: LedgerConfiguration, logs: ShardLogs?,
        publishedFile: URL? = nil, deliveries: WebhookDeliverer.Settings = .init(), engine: Engine = .init(),
        standby: PostgresClient? = nil, logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> [any Service] {
        let readiness = Readiness(drain: configuration.shutdownDrain)
        var services: [any Service] = []
        var routers: [RouterResponder<LedgerRequestContext>] = []
        for (index, shard) in shards.enumerated() {
            var logger = logger
            var delivering = deliveries
            var holds: @Sendable (String) -> Bool = { _ in true }
            var file = publishedFile
            if let cluster {
                let name = cluster.map.shards[index]
                holds = { cluster.map.shard(of: $0) == name }
                logger[metadataKey: "shard"] = "\(index)"
                (delivering.shard, delivering.holds) = (index, holds)
                file = publishedFile.map { $0.deletingLastPathComponent().appendingPathComponent("\($0.lastPathComponent).shard-\(index)") }
            }
            let local = StoreServices(
                client: shard.client, store: shard.store, configuration: configuration, deliveries: delivering, engine: engine,
                logger: logger)
            let feed = FeedTail(
                store: shard.store, events: local.events, logger: logger, followInterval: configuration.followInterval, holds: holds)
            let router = buildRouter(
                client: shard.client, store: shard.store, authority: authority, configuration: configuration, proofs: local.proofs,
                feed: feed, readiness: readiness, standby: cluster == nil ? standby : nil, holds: holds,
                evidenceQuery: ShardQuery.oneDatabase, logger: logger)
            routers.append(router.buildResponder())
            var own = shard.monitors + local.workers + [feed]
            if let signer = logs?.shards[index] {
                own.append(
                    makeCheckpointer(
                        shard.client, signer: signer, witnesses: logs?.shardWitnesses, publishedFile: file, events: local.events, logger))
            }
            services += shard.join.map { [ShardJoin.Services(join: $0, services: own)] } ?? own
        }
        let front =
            if let cluster {
                sharded(
                    routers, shards: shards, cluster: cluster, authority: authority, logs: logs, publishedFile: publishedFile,
                    services: &services, bodyLimit: configuration.bodyLimit, logger: logger)
            } else {
                ShardRouter(single: routers[0], bodyLimit: configuration.bodyLimit)
            }
        return services + [server(front, configuration: configuration, logger: logger, onRunning: onRunning), readiness]
    }

    /// The front of several shards, and the top log's services (`services` gains them).
    private static func sharded(
        _ routers: [RouterResponder<LedgerRequestContext>], shards: [Shard], cluster: Cluster, authority: TokenAuthority,
        logs: ShardLogs?, publishedFile: URL?, services: inout [any Service], bodyLimit: Int, logger: Logger
    ) -> ShardRouter<RouterResponder<LedgerRequestContext>> {
        var topLogger = logger
        topLogger[metadataKey: "shard"] = "top"
        let top = cluster.top
        if let logs, let signer = logs.top {
            let events = NotificationHub(client: top, channel: EventStore.channel, logger: topLogger)
            let trees = zip(shards, logs.shards).map { (tree: LogTree(client: $0.client, logger: topLogger), verifier: $1.verifier) }
            services += [
                events,
                makeCheckpointer(
                    top, signer: signer, witnesses: logs.topWitnesses, publishedFile: publishedFile, events: events, topLogger),
                TopLogRecorder(
                    top: EventStore(client: top, logger: topLogger), map: cluster.map.recorded, shards: trees,
                    serving: shards.map { shard in { shard.serves } },
                    logger: topLogger),
            ]
        }
        let topEvidence = TopLogEvidence(store: EventStore(client: top, logger: topLogger), tree: LogTree(client: top, logger: topLogger))
        let topAvailability = cluster.topAvailability
        return ShardRouter(
            map: cluster.map, shards: routers,
            topLog: buildLogRouter(client: top, authority: authority, logger: topLogger).buildResponder(),
            available: shards.map { shard in { shard.serves } },
            topAvailable: { topAvailability.isAvailable },
            topEvidence: { try await topEvidence.level(shard: $0, covering: $1) },
            topEntry: { try await topEvidence.entry(at: $0, size: $1) }, bodyLimit: bodyLimit,
            sources: { shards.map { $0.join?.source } })
    }
}
