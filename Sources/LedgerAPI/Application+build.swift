import Foundation
import Hummingbird
import LedgerConfiguration
import LedgerConsole
import LedgerDomain
import LedgerFeed
import LedgerIndexStore
import LedgerLog
import LedgerPostgres
import LedgerReadModel
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import LedgerVerifier
import LedgerWebhooks
import LedgerWire
import Logging
import PostgresNIO

/// The router: health, readiness, the OpenAPI document and the authenticated v1 endpoints.
/// `proofs`: how proofs reach their verdict (an engine in this process, or stored requests and a
/// wait: `RoleServices` in `LedgerApp` chooses); `feed`: the process's shared tail of the log,
/// which the change feed reads (run it too); `standby`: a hot standby's pool for the reads;
/// `holds`: the collaboration ids a start may take (where several logs share the collaborations,
/// those this log holds; a front sends it the rest); `evidenceQuery`: what such a front reads in
/// an evidence request's query, checked as this one log takes it. The router knows nothing of the workers that
/// run beside it.
public func buildRouter(
    client: PostgresClient, store: EventStore, authority: TokenAuthority, configuration: LedgerConfiguration, proofs: ProofService,
    feed: FeedTail, readiness: Readiness = Readiness(), standby: PostgresClient? = nil,
    holds: @escaping @Sendable (String) -> Bool = { _ in true }, evidenceQuery: @escaping @Sendable (Request) throws -> Void = { _ in },
    logger: Logger
) -> Router<LedgerRequestContext> {
    let router = Router(context: LedgerRequestContext.self)
    // Request count and latency by method, route and status, outermost: it counts the status
    // the client gets (an error as `ErrorMiddleware` answers it, a cancelled request as 503).
    router.add(middleware: MetricsMiddleware())
    // Request ids and the access log next, so they see every answer, refusals included.
    router.add(middleware: RequestIdMiddleware())
    router.add(middleware: ErrorMiddleware())
    router.get("health") { _, _ in HealthResponse(status: "ok") }
    router.get("ready") { _, _ -> HealthResponse in
        if readiness.isStopping {
            throw DomainError(.shuttingDown, "this instance is shutting down; send requests to another")
        }
        do {
            try await Migrator(client: client, logger: logger).ensureCurrent()
        } catch {
            throw DomainError(.notReady, "\(error)")
        }
        return HealthResponse(status: "ready")
    }
    router.get("metrics") { _, _ -> Response in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(string: LedgerMetrics.text())))
    }
    router.get("openapi.yaml") { _, _ -> Response in
        Response(
            status: .ok, headers: [.contentType: "application/yaml"],
            body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.text)))
    }
    ConsoleController(provider: ConsoleProvider(configuration)).addRoutes(to: router)
    let reads = ReadClient(primary: client, standby: standby, store: store, logger: logger, readWait: configuration.readWait)
    let commands = CollaborationCommands(store: store, publicBaseURL: configuration.baseURL, holds: holds)
    let collaborations = CollaborationStreams(store: store)
    let v1 = router.group("v1").add(middleware: AuthMiddleware(authority: authority))
    CollaborationController(commands: commands, reads: reads, bodyLimit: configuration.bodyLimit).addRoutes(to: v1)
    ProofController(service: proofs, bodyLimit: configuration.bodyLimit).addRoutes(to: v1)
    FeedController(reads: reads, store: store, tail: feed).addRoutes(to: v1)
    WebhookController(
        registry: WebhookRegistry(client: client, logger: logger), collaborations: collaborations, subjects: Subjects(store: store),
        bodyLimit: configuration.bodyLimit,
        allowHTTP: configuration.webhooksAllowHTTP, allowPrivate: configuration.webhooksAllowPrivate
    ).addRoutes(to: v1)
    PrivacyController(office: PrivacyOffice(store: store), bodyLimit: configuration.bodyLimit).addRoutes(to: v1)
    let tree = LogTree(client: client, logger: logger)
    let latest = LatestCheckpoint(tree: tree)
    LogController(
        tree: tree, store: store, collaborations: collaborations, subjects: Subjects(store: store), latestCheckpoint: latest,
        client: client, logger: logger, evidenceQuery: evidenceQuery
    )
    .addRoutes(to: v1)
    LookupController(
        index: IndexReader(client: client, logger: logger), tree: tree, store: store, collaborations: collaborations,
        subjects: Subjects(store: store), latestCheckpoint: latest
    )
    .addRoutes(to: v1)
    TileController(tiles: TileStore(tree: tree, latest: latest), latest: latest, publicEntries: configuration.publicEntries)
        .addRoutes(to: router.group("tlog").add(middleware: AuthMiddleware(authority: authority, optional: true)))
    // Last: wraps only the not-found responder (405 + Allow for a known path, wrong method).
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
    return router
}
