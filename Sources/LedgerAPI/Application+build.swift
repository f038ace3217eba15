import Foundation
import Hummingbird
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWebhooks
import LedgerWire
import LedgerVerifier
import Logging
import PostgresNIO
import Prometheus

/// Everything the API needs, built once per process.
public struct APIConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var publicBaseURL: String?
    public var bodyLimit: Int
    /// Seconds a challenge stays valid.
    public var challengeLifetime: TimeInterval
    /// Rejected proofs recorded per account and minute before further ones get 429.
    public var rejectionLimitPerMinute: Int
    /// How long a proof submission waits for its verdict before answering 202.
    public var verdictWait: Duration
    /// How long a read waits for the views to reach its `minPosition` before a 503 `view_behind`.
    public var readWait: Duration = .seconds(2)
    /// Webhook URLs may be plain http (`LEDGER_WEBHOOKS_ALLOW_HTTP`: development and tests only).
    public var allowHTTPWebhooks = false
    /// After SIGTERM, how long `/ready` answers 503 while everything else is still served,
    /// before the server stops taking requests (`LEDGER_SHUTDOWN_DRAIN`).
    public var shutdownDrain: Duration = .zero

    public init(
        host: String = "127.0.0.1", port: Int = 8080, publicBaseURL: String? = nil, bodyLimit: Int = 1 << 20,
        challengeLifetime: TimeInterval = 120, rejectionLimitPerMinute: Int = 20, verdictWait: Duration = .seconds(5)
    ) {
        self.verdictWait = verdictWait
        self.host = host
        self.port = port
        self.publicBaseURL = publicBaseURL
        self.bodyLimit = bodyLimit
        self.challengeLifetime = challengeLifetime
        self.rejectionLimitPerMinute = rejectionLimitPerMinute
    }

    /// Where universal links point: the public base URL, else this server.
    public var baseURL: String { publicBaseURL ?? "http://\(host):\(port)" }
}

/// How proof submissions reach a verdict: with a batcher, this process decides them on the
/// grouped path; without one, verifier workers decide them, and the API waits for their
/// verdict NOTIFY on `verdicts`.
public struct VerifierLink: Sendable {
    public var batcher: ProofBatcher?
    public var verdicts: NotificationHub?

    public init(batcher: ProofBatcher?, verdicts: NotificationHub?) {
        self.batcher = batcher
        self.verdicts = verdicts
    }

    /// As in `ledger serve`: the grouped path.
    public static func local(client: PostgresClient, logger: Logger, verdicts: NotificationHub?) -> VerifierLink {
        VerifierLink(batcher: ProofBatcher(client: client, logger: logger), verdicts: verdicts)
    }
}

/// The router: health, readiness, the OpenAPI document and the authenticated v1 endpoints.
/// `feed`: the process's shared tail of the log, which the change feed reads (run it too).
/// `standby`: a hot standby's pool for the reads (`CollaborationService.reader`).
public func buildRouter(
    client: PostgresClient, store: any EventStore, authority: TokenAuthority, configuration: APIConfiguration,
    verifier: VerifierLink, feed: FeedTail, readiness: Readiness = Readiness(), standby: PostgresClient? = nil, logger: Logger
) -> Router<LedgerRequestContext> {
    let router = Router(context: LedgerRequestContext.self)
    // Request ids and the access log outermost, so they see every answer, refusals included.
    router.add(middleware: RequestIdMiddleware())
    router.add(middleware: ErrorMiddleware())
    // Request count and latency by method, route and status.
    router.add(middleware: MetricsMiddleware())
    router.get("health") { _, _ in HealthResponse(status: "ok") }
    router.get("ready") { _, _ -> HealthResponse in
        if readiness.isStopping {
            throw APIError(.serviceUnavailable, "shutting_down", "this instance is shutting down; send requests to another")
        }
        do {
            try await Migrator(client: client, logger: logger).ensureCurrent()
        } catch {
            throw APIError(.serviceUnavailable, "not_ready", "\(error)")
        }
        return HealthResponse(status: "ready")
    }
    router.get("metrics") { _, _ -> Response in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(string: LedgerMetrics.registry.emitToString())))
    }
    router.get("openapi.yaml") { _, _ -> Response in
        Response(
            status: .ok, headers: [.contentType: "application/yaml"],
            body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.text)))
    }
    let service = CollaborationService(
        store: store, client: client, publicBaseURL: configuration.baseURL, logger: logger, readWait: configuration.readWait,
        standby: standby)
    let v1 = router.group("v1").add(middleware: AuthMiddleware(authority: authority))
    CollaborationController(service: service, bodyLimit: configuration.bodyLimit).addRoutes(to: v1)
    let proofs = ProofService(
        requests: ProofRequests(client: client, logger: logger, challengeLifetime: configuration.challengeLifetime),
        collaborations: service, batcher: verifier.batcher, verdicts: verifier.verdicts,
        verdictWait: configuration.verdictWait, throttle: RejectionThrottle(client: client, logger: logger, limit: configuration.rejectionLimitPerMinute))
    ProofController(service: proofs, bodyLimit: configuration.bodyLimit).addRoutes(to: v1)
    FeedController(service: service, store: store, tail: feed).addRoutes(to: v1)
    WebhookController(
        registry: WebhookRegistry(client: client, logger: logger), service: service, bodyLimit: configuration.bodyLimit,
        allowHTTP: configuration.allowHTTPWebhooks
    ).addRoutes(to: v1)
    let tree = LogTree(client: client, logger: logger)
    LogController(tree: tree, store: store, collaborations: service, latestCheckpoint: LatestCheckpoint(tree: tree)).addRoutes(to: v1)
    // Last: wraps only the not-found responder (405 + Allow for a known path, wrong method).
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
    return router
}

public enum OpenAPIDocument {
    /// The document served at /openapi.yaml (Sources/LedgerAPI/openapi.yaml).
    public static let text: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return "openapi: 3.1.0\n" }
        return text
    }()
}
