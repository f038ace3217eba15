import Foundation
import Hummingbird
import LedgerAPI
import LedgerConfiguration
import LedgerDomain
import LedgerFeed
import LedgerIndexStore
import LedgerLog
import LedgerPostgres
import LedgerProjections
import LedgerShardFront
import LedgerStore
import LedgerTokens
import LedgerVerifier
import LedgerWebhooks
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import TransparencyLog

/// Each role's services, for `LedgerProcess` (which adds what every process runs): the
/// composition root. `LedgerAPI` only routes; what runs beside its HTTP server
/// (workers, the checkpointer, the feed's tail, the LISTEN hubs) is chosen here. Order matters:
/// a ServiceGroup stops them in reverse, so `Readiness` (last) turns `/ready` to 503 first, then
/// the HTTP server stops taking requests before the workers and listeners it uses.
public enum RoleServices {
    /// What `serve` runs on one store beside its API and checkpointer: a verifier worker for the
    /// requests `ledger api` instances store, the projectors, the expiry service, a webhook
    /// delivery worker, the index recorder (`LEDGER_INDEX`), and their LISTEN hubs (`workers`); the proof path deciding in this process
    /// (`proofs`), and the hub of appended events the API's feed and the checkpointer wake on.
    struct StoreServices {
        let workers: [any Service]
        let proofs: ProofService
        let events: NotificationHub

        init(
            client: PostgresClient, store: EventStore, configuration: LedgerConfiguration, deliveries: WebhookDeliverer.Settings,
            engine setup: Engine, logger: Logger
        ) {
            let requests = NotificationHub(client: client, channel: VerifierChannels.requests, logger: logger)
            let engine = ProofEngine(
                client: client, logger: logger, settings: setup.settings ?? .init(maxGroup: configuration.verifierGroup), hooks: setup.hooks
            )
            let worker = VerifierWorker(
                engine: engine, requests: proofRequests(client, configuration, logger), wake: requests, logger: logger)
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            let projector = ProjectorWorker(client: client, events: events, logger: logger, gather: configuration.followInterval)
            let windows = NotificationHub(client: client, channel: ExpiryService.channel, logger: logger)
            let expiry = ExpiryService(client: client, store: store, wake: windows, logger: logger)
            let deliverer = WebhookDeliverer(
                client: client, store: store, events: events, logger: logger, settings: deliverySettings(deliveries, configuration))
            self.events = events
            self.proofs = ProofService(
                requests: proofRequests(client, configuration, logger), store: store, engine: engine, verdicts: nil,
                verdictWait: configuration.verdictWait)
            self.workers =
                [requests, events, windows, worker, projector, expiry, deliverer]
                + (configuration.index ? [IndexRecorder(client: client, events: store, logger: logger)] : [])
        }
    }

    /// How `serve`'s proof engines decide: with the configuration's group size and the engine's
    /// defaults, unless a test sets them (`hooks` run inside each group's attempts).
    public struct Engine: Sendable {
        public var settings: ProofEngine.Settings?
        public var hooks: ProofEngine.Hooks

        public init(settings: ProofEngine.Settings? = nil, hooks: ProofEngine.Hooks = .init()) {
            (self.settings, self.hooks) = (settings, hooks)
        }
    }

    /// `ledger api`: the API alone (with the change feed's tail and its LISTEN); proofs are
    /// stored for `ledger verifier` workers, whose verdicts the API waits for.
    public static func apiOnly(
        client: PostgresClient, store: EventStore, authority: TokenAuthority, configuration: LedgerConfiguration,
        standby: PostgresClient? = nil, logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> [any Service] {
        let verdicts = NotificationHub(client: client, channel: VerifierChannels.verdicts, logger: logger)
        let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
        let proofs = ProofService(
            requests: proofRequests(client, configuration, logger), store: store, engine: nil, verdicts: verdicts,
            verdictWait: configuration.verdictWait)
        let api = api(
            client: client, store: store, authority: authority, configuration: configuration, proofs: proofs, events: events,
            standby: standby, logger: logger, onRunning: onRunning)
        return [verdicts, events, api.feed, api.app, api.readiness]
    }

    /// `ledger verifier`: a worker deciding the requests `ledger api` stores.
    public static func verifier(client: PostgresClient, configuration: LedgerConfiguration, logger: Logger) -> [any Service] {
        let requests = NotificationHub(client: client, channel: VerifierChannels.requests, logger: logger)
        let engine = ProofEngine(client: client, logger: logger, settings: .init(maxGroup: configuration.verifierGroup))
        logger.info("verifier worker running", metadata: ["group": "\(configuration.verifierGroup)"])
        return [
            requests,
            VerifierWorker(engine: engine, requests: proofRequests(client, configuration, logger), wake: requests, logger: logger),
        ]
    }

    /// `ledger project`: a projector worker (leases keep one owner per projection), the expiry
    /// service (one instance holds its lease), and their LISTENs.
    public static func projector(
        client: PostgresClient, store: EventStore, configuration: LedgerConfiguration, logger: Logger
    ) -> [any Service] {
        let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
        let worker = ProjectorWorker(client: client, events: events, logger: logger, gather: configuration.followInterval)
        let windows = NotificationHub(client: client, channel: ExpiryService.channel, logger: logger)
        logger.info("projector worker running", metadata: ["id": "\(worker.id)"])
        return [events, windows, worker, ExpiryService(client: client, store: store, wake: windows, logger: logger)]
    }

    /// `ledger deliver`: a webhook delivery worker (workers share the webhooks through leases)
    /// and its LISTEN.
    public static func deliverer(
        client: PostgresClient, store: EventStore, configuration: LedgerConfiguration, deliveries: WebhookDeliverer.Settings = .init(),
        logger: Logger
    ) -> [any Service] {
        let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
        return [
            events,
            WebhookDeliverer(
                client: client, store: store, events: events, logger: logger, settings: deliverySettings(deliveries, configuration)),
        ]
    }

    /// `ledger checkpointer`: the checkpointer and its LISTEN (one signs; another waits for the
    /// lease).
    public static func checkpointer(
        client: PostgresClient, signer: NoteSigner, witnesses: WitnessPolicy?, publishedFile: URL?, logger: Logger
    ) -> [any Service] {
        let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
        return [
            events, makeCheckpointer(client, signer: signer, witnesses: witnesses, publishedFile: publishedFile, events: events, logger),
        ]
    }

    /// The checkpointer, publishing through the policy's witnesses if one is given, and keeping
    /// the latest signed checkpoint in `publishedFile` (one record of its floor) if one is given.
    static func makeCheckpointer(
        _ client: PostgresClient, signer: NoteSigner, witnesses: WitnessPolicy?, publishedFile: URL?, events: NotificationHub,
        _ logger: Logger
    ) -> Checkpointer {
        Checkpointer(
            client: client, signer: signer, events: events, logger: logger,
            witnesses: witnesses.map { WitnessClient(policy: $0, tree: LogTree(client: client, logger: logger), logger: logger) },
            publishedFile: publishedFile)
    }

    static func proofRequests(_ client: PostgresClient, _ configuration: LedgerConfiguration, _ logger: Logger) -> ProofRequests {
        ProofRequests(client: client, logger: logger, challengeLifetime: configuration.challengeLifetime.seconds)
    }

    /// `settings` with what the configuration says of webhooks (`LEDGER_WEBHOOKS_ALLOW_PRIVATE`).
    static func deliverySettings(_ settings: WebhookDeliverer.Settings, _ configuration: LedgerConfiguration) -> WebhookDeliverer.Settings {
        var settings = settings
        settings.allowPrivate = configuration.webhooksAllowPrivate
        settings.followInterval = configuration.followInterval
        return settings
    }

    /// The API as `ledger api` runs it (`serve` builds its shards' routers in `serve`), around the
    /// role's proof path: the change feed's tail (on the role's `events` hub), the HTTP server
    /// around `LedgerAPI`'s router (`onRunning` gets the bound port, useful with port 0) and
    /// `Readiness`.
    static func api(
        client: PostgresClient, store: EventStore, authority: TokenAuthority, configuration: LedgerConfiguration,
        proofs: ProofService, events: NotificationHub, standby: PostgresClient?, logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void
    ) -> (feed: FeedTail, app: any Service, readiness: Readiness) {
        let feed = FeedTail(store: store, events: events, logger: logger, followInterval: configuration.followInterval)
        let readiness = Readiness(drain: configuration.shutdownDrain)
        let router = buildRouter(
            client: client, store: store, authority: authority, configuration: configuration, proofs: proofs, feed: feed,
            readiness: readiness, standby: standby, evidenceQuery: ShardQuery.oneDatabase, logger: logger)
        let app = server(router.buildResponder(), configuration: configuration, logger: logger, onRunning: onRunning)
        return (feed, app, readiness)
    }

    /// The HTTP server around `responder` (`onRunning` gets the bound port, useful with port 0).
    static func server<Responder: HTTPResponder>(
        _ responder: Responder, configuration: LedgerConfiguration, logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void
    ) -> any Service where Responder.Context == LedgerRequestContext {
        Application(
            responder: AbandoningResponder(inner: responder),
            // A connection that sends nothing for a minute is closed: slow or stalled clients do
            // not hold sockets forever (they cost no thread meanwhile: the server is NIO).
            server: .http1(configuration: .init(idleTimeout: .seconds(60))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "participant-ledger"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                logger.info("ledger listening", metadata: ["url": "http://\(configuration.host):\(port)"])
                await onRunning(port)
            },
            logger: logger)
    }
}
