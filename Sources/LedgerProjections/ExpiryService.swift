import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle

/// Appends `AccessExpired` when an identity's window ends (SPEC "Time-bound access").
///
/// **One expirer.** It works while holding a lease (`AdvisoryLease`, a session advisory lock);
/// the other instances wait for it. Should two ever act at once (a lease lost mid-round), the
/// log still holds each expiry once: the event's id derives from the window
/// (`CollaborationDecisions.expiries`), and each append states the stream version it decided on.
///
/// **From the log.** The membership projection nominates collaborations with a window due
/// (`ledger_due_expiries`, `ledger_next_expiry`: Migrations/functions); what to append is decided
/// on each one's inline state, which the store writes with its events, never on the view. After
/// downtime every overdue window is expired at once, its `dueAt` the window's end.
///
/// **Asleep until the next `dueAt`.** Nothing wakes it per append: the membership projection
/// notifies `ledger_expiry` only when it projects a window or an expiry, and it looks again at
/// least every `maxSleep`. A collaboration it has just decided is left out until the projection
/// has folded that decision (the notification of its expiries says so), so a lagging view never
/// makes it spin.
public struct ExpiryService: Service {
    public static let channel = "ledger_expiry"
    /// "EXPIRY": the lease every instance asks for.
    public static let leaseKey: Int64 = 0x45_5850_4952_59

    let client: PostgresClient
    let store: EventStore
    let wake: NotificationHub
    let logger: Logger
    /// Collaborations decided per round at most.
    let batch: Int
    let maxSleep: Duration

    public init(
        client: PostgresClient, store: EventStore, wake: NotificationHub, logger: Logger, batch: Int = 2_000,
        maxSleep: Duration = .seconds(60)
    ) {
        self.client = client
        self.store = store
        self.wake = wake
        self.logger = logger
        self.batch = batch
        self.maxSleep = maxSleep
    }

    static let lag = Timer(label: "ledger_expiry_lag_seconds")
    static let appended = Counter(label: "ledger_expiry_appended_total")

    public func run() async throws {
        let signal = wake.register()
        defer { signal.cancel() }
        let queries = ExpiryQueries(client: client, logger: logger)
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await AdvisoryLease(key: Self.leaseKey, client: client, logger: logger).withLease { connection in
                        logger.info("expiry service running")
                        try await work(queries, connection, signal)
                    }
                } catch {
                    if Task.isCancelled { break }
                    logger.warning("expiry service: stopped; retrying", metadata: ["error": "\(String(reflecting: error))"])
                }
                // Not the lease holder, or the connection was lost: look again shortly.
                _ = await signal.wait(timeout: .seconds(1))
            }
        }
    }

    /// The lease holder's loop: expire what is due, then sleep until the next `dueAt`.
    private func work(_ queries: ExpiryQueries, _ connection: PostgresConnection, _ signal: NotificationHub.Subscription) async throws {
        // Collaborations decided and not yet folded by the projection: stream position to wait for.
        var unfolded: [String: Int64] = [:]
        while !Task.isCancelled {
            let now = Date()
            let round = try await queries.due(at: now, limit: batch + unfolded.count, on: connection)
            unfolded = unfolded.filter { $0.value > round.projected }
            let due = round.collaborations.filter { unfolded[$0] == nil }.prefix(batch)
            if !due.isEmpty {
                for (collaboration, position) in try await expire(Array(due), now: now) { unfolded[collaboration] = position }
                continue
            }
            // Nothing due that is not waiting for the projection: sleep until the next dueAt, a
            // new window, or (while decisions wait to be folded) a moment.
            var sleep = maxSleep
            if let next = round.next { sleep = min(sleep, .milliseconds(max(0, Int64(next.timeIntervalSince(Date()) * 1000)))) }
            if !unfolded.isEmpty { sleep = min(sleep, .milliseconds(250)) }  // the fold's notification usually comes first
            _ = await signal.wait(timeout: max(sleep, .milliseconds(10)))
        }
    }

    /// Decides and appends the expiries due at `now` in `collaborations`; answers each one's stream
    /// position after it (what the projection must reach before it is looked at again).
    func expire(_ collaborations: [String], now: Date) async throws -> [String: Int64] {
        var positions: [String: Int64] = [:]
        var open = collaborations
        for _ in 1...8 where !open.isEmpty {
            let states = try await Collaborations(store: store).currents(open)
            var requests: [AppendRequest] = []
            var decided: [(String, [CollaborationEvent])] = []
            for collaboration in open {
                guard let current = states[collaboration] else {
                    positions[collaboration] = .max  // no state to decide on: left alone while this lease lasts
                    logger.error("expiry service: a collaboration with a window due has no state", metadata: ["collaboration": "\(collaboration)"])
                    continue
                }
                positions[collaboration] = current.position
                let expiries = CollaborationDecisions.expiries(state: current.state, now: now)
                guard !expiries.isEmpty else { continue }
                var next = current.state
                for expiry in expiries { next.apply(expiry.event) }
                requests.append(AppendRequest(
                    streamId: Streams.collaboration(collaboration), expectedVersion: .exact(current.version),
                    events: expiries.map { $0.event.newEvent(metadata: EventMetadata(), id: $0.id) }, state: next.json))
                decided.append((collaboration, expiries.map(\.event)))
            }
            open = []
            for ((collaboration, events), result) in zip(decided, await store.appendAll(requests)) {
                switch result {
                case .success(let appended):
                    positions[collaboration] = appended.lastPosition
                    guard !appended.duplicate else { continue }
                    Self.appended.increment(by: events.count)
                    let appendedAt = Date()
                    for case .accessExpired(let expired) in events {
                        if let due = AccessWindow(stored: nil, expired.dueAt).notAfterDate {
                            Self.lag.recordNanoseconds(Int64(max(0, appendedAt.timeIntervalSince(due)) * 1e9))
                        }
                    }
                case .failure(let error as StoreError) where error.isVersionConflict:
                    open.append(collaboration)  // appended to since the read: decide again
                case .failure(let error as StoreError):
                    // Refused for this collaboration alone: the others' expiries go on.
                    positions[collaboration] = .max
                    logger.error("expiry service: an expiry was refused", metadata: ["collaboration": "\(collaboration)", "error": "\(error)"])
                case .failure(let error):
                    throw error  // the database away: the lease is given up and taken again
                }
            }
        }
        return positions
    }
}
