import Hummingbird
import LedgerLog
import LedgerStore
import LedgerTokens
import Logging
import PostgresNIO

/// A router for a log alone, with no collaborations beside it: its checkpoint and tiles under
/// `/tlog/…` (entry bundles public: such a log's entries are signed checkpoints of other logs,
/// no personal data), and its key, checkpoints, proofs and status under `/v1/log/…`, as
/// `buildRouter` gives a ledger's own log. A front that records other logs' checkpoints in a
/// log of its own serves that log through it.
public func buildLogRouter(client: PostgresClient, authority: TokenAuthority, logger: Logger) -> Router<LedgerRequestContext> {
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
