import Hummingbird
import LedgerLog
import LedgerStore
import LedgerTokens
import Logging
import PostgresNIO

/// On shards, the top log's own router (`ShardRouter` sends it `/tlog/…` outside
/// `/tlog/shard/{k}/…`, and `/v1/log/…`): the checkpoint and tiles of the top log, whose entries
/// are the shards' recorded checkpoints (`TopLogRecorder`), and its key, checkpoints, proofs and
/// status as one database's `/v1/log/…` gives them. Its entry bundles are public: they hold
/// signed checkpoints, no personal data.
public func buildTopLogRouter(client: PostgresClient, authority: TokenAuthority, logger: Logger) -> Router<LedgerRequestContext> {
    let router = Router(context: LedgerRequestContext.self)
    router.add(middleware: RequestIdMiddleware())
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: MetricsMiddleware())
    let tree = LogTree(client: client, logger: logger)
    let latest = LatestCheckpoint(tree: tree)
    TileController(tiles: TileStore(tree: tree, latest: latest), latest: latest, publicEntries: true)
        .addRoutes(to: router.group("tlog").add(middleware: AuthMiddleware(authority: authority, optional: true)))
    let store = EventStore(client: client, logger: logger)
    LogController(
        tree: tree, store: store, collaborations: CollaborationStreams(store: store), subjects: Subjects(store: store),
        latestCheckpoint: latest, client: client, logger: logger
    )
    .addRoutes(to: router.group("v1").add(middleware: AuthMiddleware(authority: authority)))
    return router
}
