import AsyncHTTPClient
import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle

/// A delivery worker (`ledger deliver`, also inside `ledger serve`): POSTs each webhook's
/// events, signed, in log order, at least once.
///
/// **One worker per webhook at a time.** A lane leases a webhook that has events after its
/// cursor and is due (`WebhookLease.claim`), delivers them one by one, and moves the cursor in
/// the database after each 2xx answer. Only then is an event done: a worker killed mid-delivery
/// leaves the cursor before that event, and whoever takes the lease after it expires delivers
/// it again (at least once; `Ledger-Delivery` is the same each time, so receivers drop repeats).
///
/// **Where to.** Before a lane sends a batch, the URL's host is resolved and checked again
/// (`WebhookDestination`: public addresses only, unless `allowPrivate`), and the batch's
/// connections go to the address checked.
///
/// **Failures.** A non-2xx answer, a timeout, a refused connection or a host that resolves to
/// no public address stops the webhook's deliveries: the cursor stays before the event, which
/// is retried after 1 s, 2 s, 4 s … (at most `longestRetry`); after `disableAfter` of failures
/// in a row the webhook is disabled, the last error kept for `GET /v1/webhooks`.
public struct WebhookDeliverer: Service {
    public struct Settings: Sendable {
        /// Webhooks one worker delivers at once (each in its own lane).
        public var concurrency = 8
        /// How long a lease lasts; renewed with each delivery, so it outlives any one of them.
        public var lease: Duration = .seconds(60)
        /// A delivery not answered within this fails.
        public var timeout: Duration = .seconds(10)
        public var firstRetry: Duration = .seconds(1)
        public var longestRetry: Duration = .seconds(600)
        public var disableAfter: Duration = .seconds(86_400)
        /// How often an idle lane looks for due retries (new events wake it, at most once per
        /// `followInterval`).
        public var pollInterval: Duration = .seconds(1)
        /// The least time between two wakes by new events (`LEDGER_FOLLOW_INTERVAL`).
        public var followInterval: Duration = NotificationHub.followInterval
        /// Events read from the log at a time.
        public var batchSize = 200
        /// `LEDGER_WEBHOOKS_ALLOW_PRIVATE`: deliveries may go to loopback, private and other
        /// non-public addresses (development, tests); otherwise such a destination is a failure.
        public var allowPrivate = false
        /// On shards, the shard whose events these workers deliver: named in each delivered
        /// entry and in its `Ledger-Delivery` id (a webhook of every collaboration has one id on
        /// every shard, and each shard's positions are its own). Nil on one database.
        public var shard: Int?
        /// The collaborations whose events these workers deliver: every one, but on a shard a
        /// partition moved to or from, whose log holds the other shard's past too, which that
        /// shard delivers (docs/SCALING.md, "Adding a shard"): a webhook of every collaboration
        /// came with the copy at its position, and a backlog then would be delivered twice.
        public var holds: @Sendable (String) -> Bool = { _ in true }

        public init() {}
    }

    public let id: String
    let client: PostgresClient
    let store: EventStore
    let events: NotificationHub
    let logger: Logger
    let settings: Settings

    public init(
        client: PostgresClient, store: EventStore, events: NotificationHub, logger: Logger,
        id: String = "deliver-\(UUID().uuidString.prefix(8))", settings: Settings = Settings()
    ) {
        self.id = id
        self.client = client
        self.store = store
        self.events = events
        self.logger = logger
        self.settings = settings
    }

    public func run() async throws {
        // Both series from the start, so an alert on failures has a series to compare with.
        for result in ["delivered", "failed"] {
            Counter(label: "ledger_webhook_deliveries_total", dimensions: [("result", result)]).increment(by: 0)
        }
        await cancelWhenGracefulShutdown {
            let others = (1..<max(1, settings.concurrency)).map { _ in Signal() }
            await withTaskGroup(of: Void.self) { lanes in
                lanes.addTask { await lead(others) }
                for (n, signal) in others.enumerated() {
                    lanes.addTask { await lane(signal, next: others[(n + 1) % others.count]) }
                }
            }
        }
    }

    /// The first lane: woken by new events (or every `pollInterval`, for retries that came due),
    /// it claims a webhook and delivers, and wakes the next lane whenever it claimed one, which
    /// may find another. With no webhook registered it ignores new events and looks again every
    /// `pollInterval`: an idle deliverer costs one query a poll, none per append.
    func lead(_ others: [Signal]) async {
        let wake = events.register(spacing: settings.followInterval)
        defer { wake.cancel() }
        let leases = WebhookLease.Queries(client: client, logger: logger, worker: id, settings: settings)
        while !Task.isCancelled {
            var registered = true
            do {
                let timer = leaseTimer()  // before the claim: the lease runs from no later than this
                let (lease, any) = try await leases.claim()
                registered = any
                if let lease {
                    others.first?.raise()
                    try await deliver(lease, leases, timer)
                    continue
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning(
                    "deliver: step failed; retrying",
                    metadata: ["worker": "\(id)", "error": "\(DatabaseFailure.describe(error, reflecting: true))"])
            }
            if registered {
                await wake.wait(timeout: settings.pollInterval)
            } else {
                try? await Task.sleep(for: settings.pollInterval)
            }
        }
    }

    /// Another lane: woken by the lane before it when that one claimed a webhook, it claims and
    /// delivers while there are webhooks due, waking the next.
    func lane(_ signal: Signal, next: Signal) async {
        let leases = WebhookLease.Queries(client: client, logger: logger, worker: id, settings: settings)
        while !Task.isCancelled {
            guard await signal.wait(timeout: .seconds(60)) else { continue }
            while !Task.isCancelled {
                do {
                    let timer = leaseTimer()
                    guard let lease = try await leases.claim().lease else { break }
                    next.raise()
                    try await deliver(lease, leases, timer)
                } catch {
                    if !Task.isCancelled {
                        logger.warning(
                            "deliver: step failed",
                            metadata: ["worker": "\(id)", "error": "\(DatabaseFailure.describe(error, reflecting: true))"])
                    }
                    break
                }
            }
        }
    }

    /// Delivers the webhook's events in one batch of the log, in order, stopping at the first
    /// failure; gives the lease back. The destination is checked first, once the batch holds an
    /// event for the webhook, and the batch's connections go to the address checked (one HTTP
    /// client per batch, pinned to it, shut down after).
    func deliver(_ lease: WebhookLease, _ leases: WebhookLease.Queries, _ timer: LeaseTimer<ContinuousClock>) async throws {
        let batch = try await store.readAll(after: lease.position, limit: settings.batchSize)
        let owners = try await leases.owners(of: Set(batch.map(\.streamId)))
        let due = batch.filter {
            lease.wants($0, owner: owners[$0.streamId]) && (Streams.collaborationId(of: $0.streamId).map(settings.holds) ?? true)
        }
        guard let first = due.first else { return try await leases.release(lease, through: batch.last?.position ?? lease.position) }
        let destination: WebhookDestination
        do {
            destination = try await WebhookDestination.check(url: lease.url, allowPrivate: settings.allowPrivate)
        } catch {
            if Task.isCancelled { return }
            // A failure like a refused connection: the cursor stays before the first event due.
            Counter(label: "ledger_webhook_deliveries_total", dimensions: [("result", "failed")]).increment()
            let before = batch.last(where: { $0.position < first.position })?.position ?? lease.position
            return try await leases.failed(lease, through: before, error: String(String(describing: error).prefix(500)))
        }
        let http = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: destination.clientConfiguration,
            backgroundActivityLogger: logger)
        do {
            try await send(batch, due: Set(due.map(\.position)), lease, leases, http, timer)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try? await http.shutdown()
    }

    /// Sends the batch's events `due` in order, stopping at the first failure; gives the lease
    /// back. A delivery starts only while the lease will outlast it (`LeaseTimer`, on this lane's
    /// clock): a lane that stalled gives the webhook back rather than deliver beside the worker
    /// that may have taken it over.
    func send(
        _ batch: [RecordedEvent], due: Set<Int64>, _ lease: WebhookLease, _ leases: WebhookLease.Queries, _ http: HTTPClient,
        _ timer: LeaseTimer<ContinuousClock>
    ) async throws {
        var timer = timer
        let disclosure = try await Subjects(store: store).disclosure(for: batch.filter { due.contains($0.position) })
        let encoder = APIJSON.encoder()
        var done = lease.position
        for recorded in batch {
            if due.contains(recorded.position) {
                guard timer.allowsDelivery else { break }
                var entry = try History.Entry(recorded, disclosure: disclosure)
                entry.shard = settings.shard
                let body = try encoder.encode(entry)
                if let failure = await post(body, of: recorded.position, for: lease, http) {
                    // Stopping is not the receiver's failure: the lease lapses and the event is
                    // delivered again, as after a crash.
                    if Task.isCancelled { return }
                    Counter(label: "ledger_webhook_deliveries_total", dimensions: [("result", "failed")]).increment()
                    try await leases.failed(lease, through: done, error: failure)
                    return
                }
                Counter(label: "ledger_webhook_deliveries_total", dimensions: [("result", "delivered")]).increment()
                let renewing = timer.reading()
                guard try await leases.delivered(lease, through: recorded.position) else { return }  // lease lost
                timer.renew(from: renewing)
            }
            done = recorded.position
        }
        try await leases.release(lease, through: done)
    }

    /// A lease's timer, made before the claim.
    func leaseTimer() -> LeaseTimer<ContinuousClock> {
        LeaseTimer(clock: ContinuousClock(), lease: settings.lease, timeout: settings.timeout)
    }

    /// POSTs one event; nil when answered 2xx, else why not.
    func post(_ body: Data, of position: Int64, for lease: WebhookLease, _ http: HTTPClient) async -> String? {
        var request = HTTPClientRequest(url: lease.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "participant-ledger-webhooks")
        request.headers.add(
            name: WebhookSignature.headerName, value: WebhookSignature.header(secret: lease.secret, body: body, time: Date()))
        request.headers.add(
            name: WebhookSignature.deliveryHeaderName, value: lease.deliveryId(position, shard: settings.shard).uuidString.lowercased())
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await http.execute(request, timeout: .milliseconds(Int64(settings.timeout.seconds * 1000)))
            _ = try? await response.body.collect(upTo: 64 << 10)  // read and dropped: only the status counts
            return (200..<300).contains(response.status.code) ? nil : "HTTP \(response.status.code)"
        } catch {
            let text = (error as? HTTPClientError) == .deadlineExceeded ? "no answer within \(settings.timeout)" : String(describing: error)
            return String(text.prefix(500))
        }
    }
}
