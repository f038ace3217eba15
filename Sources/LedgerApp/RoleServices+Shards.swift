import Hummingbird
import LedgerAPI
import LedgerConfiguration
import LedgerFeed
import LedgerPostgres
import LedgerShards
import LedgerStore
import LedgerTokens
import LedgerWebhooks
import Logging
import PostgresNIO
import ServiceLifecycle

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

    /// `ledger serve` over several shards (docs/SCALING.md): each shard's store runs what `serve`
    /// runs on one (`StoreServices`, and the change feed's tail) under its own API router, whose
    /// starts take only ids its shard holds; one HTTP server sends each request to its shard's
    /// router (`ShardRouter`). No checkpointer yet: each shard's log needs its own origin, under
    /// a top log.
    public static func sharded(
        shards: [Shard], map: ShardMap, authority: TokenAuthority,
        configuration: LedgerConfiguration, deliveries: WebhookDeliverer.Settings = .init(), logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> [any Service] {
        let readiness = Readiness(drain: configuration.shutdownDrain)
        var services: [any Service] = []
        var routers: [RouterResponder<LedgerRequestContext>] = []
        for (index, shard) in shards.enumerated() {
            let name = map.shards[index]
            var logger = logger
            logger[metadataKey: "shard"] = "\(index)"
            let local = StoreServices(
                client: shard.client, store: shard.store, configuration: configuration, deliveries: deliveries, logger: logger)
            let feed = FeedTail(store: shard.store, events: local.events, logger: logger)
            let router = buildRouter(
                client: shard.client, store: shard.store, authority: authority, configuration: configuration, proofs: local.proofs,
                feed: feed, readiness: readiness, holds: { map.shard(of: $0) == name }, logger: logger)
            routers.append(router.buildResponder())
            services += local.workers + [feed]
        }
        let front = ShardRouter(
            map: map, shards: routers, available: shards.map { shard in { shard.availability.isAvailable } },
            bodyLimit: configuration.bodyLimit)
        return services + [server(front, configuration: configuration, logger: logger, onRunning: onRunning), readiness]
    }
}
