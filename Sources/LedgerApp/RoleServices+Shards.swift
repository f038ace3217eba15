import Foundation
import Hummingbird
import LedgerAPI
import LedgerConfiguration
import LedgerDomain
import LedgerFeed
import LedgerLog
import LedgerPostgres
import LedgerShards
import LedgerStore
import LedgerTokens
import LedgerWebhooks
import Logging
import PostgresNIO
import ServiceLifecycle
import TransparencyLog

extension RoleServices {
    /// A shard as `sharded` serves it: its pool, its store, and whether its database answers.
    public struct Shard: Sendable {
        public var client: PostgresClient
        public var store: EventStore
        public var availability: DatabaseAvailability

        public init(client: PostgresClient, store: EventStore, availability: DatabaseAvailability) {
            (self.client, self.store, self.availability) = (client, store, availability)
        }
    }

    /// The logs of a ledger on shards: the top log's signer and witnesses (the deployment's), and
    /// each shard's signer, the deployment's key (`NoteSigner.renamed`) under the shard's origin,
    /// the deployment's with `/shard/k` appended (`example.com/ledger/shard/0`).
    public struct ShardLogs: Sendable {
        public var top: NoteSigner
        public var witnesses: WitnessPolicy?
        public var shards: [NoteSigner]

        public init(signer: NoteSigner, witnesses: WitnessPolicy? = nil, count: Int) throws {
            (top, self.witnesses) = (signer, witnesses)
            shards = try (0..<count).map { try signer.renamed(ShardCheckpointRecorded.origin(shard: $0, top: signer.name)) }
        }
    }

    /// `ledger serve` over several shards (docs/SCALING.md): each shard's store runs what `serve`
    /// runs on one (`StoreServices`, and the change feed's tail) under its own API router, whose
    /// starts take only ids its shard holds; one HTTP server sends each request to its shard's
    /// router (`ShardRouter`). With `logs`, each shard's log is checkpointed as its own origin (its
    /// latest checkpoint kept in `publishedFile` with `.shard-k` appended), and the top log, on
    /// `top` (the database the cluster is defined in), records them (`TopLogRecorder`) and is
    /// checkpointed and witnessed as the deployment's origin (its checkpoint in `publishedFile`).
    /// `sources`: the shard each shard was copied from when it was added, if it was (a feed cursor
    /// from before reads that shard's position for it).
    public static func sharded(
        shards: [Shard], top: PostgresClient, topAvailability: DatabaseAvailability, map: ShardMap, authority: TokenAuthority,
        configuration: LedgerConfiguration,
        logs: ShardLogs? = nil, sources: [Int?] = [], publishedFile: URL? = nil, deliveries: WebhookDeliverer.Settings = .init(),
        logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> [any Service] {
        let readiness = Readiness(drain: configuration.shutdownDrain)
        var services: [any Service] = []
        var routers: [RouterResponder<LedgerRequestContext>] = []
        for (index, shard) in shards.enumerated() {
            let name = map.shards[index]
            var logger = logger
            logger[metadataKey: "shard"] = "\(index)"
            let holds: @Sendable (String) -> Bool = { map.shard(of: $0) == name }
            var delivering = deliveries
            delivering.shard = index
            delivering.holds = holds
            let local = StoreServices(
                client: shard.client, store: shard.store, configuration: configuration, deliveries: delivering, logger: logger)
            let feed = FeedTail(store: shard.store, events: local.events, logger: logger, holds: holds)
            let router = buildRouter(
                client: shard.client, store: shard.store, authority: authority, configuration: configuration, proofs: local.proofs,
                feed: feed, readiness: readiness, holds: holds, logger: logger)
            routers.append(router.buildResponder())
            services += local.workers + [feed]
            if let signer = logs?.shards[index] {
                let file = publishedFile.map {
                    $0.deletingLastPathComponent().appendingPathComponent("\($0.lastPathComponent).shard-\(index)")
                }
                services.append(
                    makeCheckpointer(shard.client, signer: signer, witnesses: nil, publishedFile: file, events: local.events, logger))
            }
        }
        var topLogger = logger
        topLogger[metadataKey: "shard"] = "top"
        if let logs {
            let events = NotificationHub(client: top, channel: EventStore.channel, logger: topLogger)
            let trees = zip(shards, logs.shards).map { (tree: LogTree(client: $0.client, logger: topLogger), verifier: $1.verifier) }
            services += [
                events,
                makeCheckpointer(top, signer: logs.top, witnesses: logs.witnesses, publishedFile: publishedFile, events: events, topLogger),
                TopLogRecorder(top: EventStore(client: top, logger: topLogger), shards: trees, logger: topLogger),
            ]
        }
        let topEvidence = TopLogEvidence(store: EventStore(client: top, logger: topLogger), tree: LogTree(client: top, logger: topLogger))
        let front = ShardRouter(
            map: map, shards: routers, topLog: buildTopLogRouter(client: top, authority: authority, logger: topLogger).buildResponder(),
            available: shards.map { shard in { shard.availability.isAvailable } }, topAvailable: { topAvailability.isAvailable },
            topEvidence: { try await topEvidence.level(shard: $0, covering: $1) },
            bodyLimit: configuration.bodyLimit, sources: sources)
        return services + [server(front, configuration: configuration, logger: logger, onRunning: onRunning), readiness]
    }
}
