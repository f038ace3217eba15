import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
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
/// (`ExpiryQueries.due`); what to append is decided on each one's inline state, which the store
/// writes with its events, never on the view. After downtime every overdue window is expired at
/// once, its `dueAt` the window's end.
///
/// **Asleep until the next `dueAt`.** Not every append wakes it: a command that gives a
/// collaboration an earlier window end notifies `ledger_expiry` with the collaboration's id
/// (`CollaborationStreams.windowsChannel`), which the service then decides from its state without
/// waiting for the view; the membership projection notifies it when it projects a window or an
/// expiry; and it looks again at least every `maxSleep`. A collaboration it has just decided is
/// left out of the view's nominations until the projection has folded that decision (the
/// notification of its expiries says so), so a lagging view never makes it spin; meanwhile the
/// service expires its next windows itself, at the `dueAt` its state gives.
public struct ExpiryService: Service {
    public static let channel = CollaborationStreams.windowsChannel
    /// "EXPIRY": the lease every instance asks for.
    public static let leaseKey: Int64 = 0x45_5850_4952_59
    /// Its holder's record (`ledger_lease_holders`).
    static let leaseName = "expiry"
    /// The holder records a round at least this often (status calls it running while it has in
    /// the last 30 s), and every instance looks at the lease and the overdue windows this often.
    static let beat: Duration = .seconds(10)

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
    /// Windows more than a second overdue, as every instance last saw (the `LedgerExpiryOverdue` alert).
    static let overdue = Gauge(label: "ledger_expiry_overdue")

    public func run() async throws {
        let signal = wake.registerCollecting()
        defer { signal.cancel() }
        let queries = ExpiryQueries(client: client, logger: logger)
        try? await look(queries)
        try await cancelWhenGracefulShutdown {
            var looked = ContinuousClock.now
            while !Task.isCancelled {
                do {
                    try await AdvisoryLease(key: Self.leaseKey, client: client, logger: logger).withLease { connection in
                        try await queries.recordHolder(taken: true, on: connection)
                        logger.info("expiry service running")
                        try await work(queries, connection, signal)
                    }
                    if ContinuousClock.now - looked >= Self.beat {
                        looked = .now
                        try await look(queries)
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

    /// The overdue windows into their gauge; a lease held by a session that is not an expiry
    /// service (any login can take an advisory lock) is said, since nothing expires meanwhile.
    func look(_ queries: ExpiryQueries) async throws {
        let status = try await queries.status()
        Self.overdue.record(status.overdue)
        if let holder = status.holder, !holder.recognised {
            logger.warning(
                "expiry service: its lease is held by a session that is not an expiry service; no window expires while it holds it",
                metadata: ["application_name": "\(holder.applicationName)", "pid": "\(holder.pid)", "overdue": "\(status.overdue)"])
        }
    }

    /// The lease holder's loop: expire what is due, then sleep until the next `dueAt` (at most
    /// `beat`: each round is recorded as progress, and the overdue windows looked at).
    private func work(_ queries: ExpiryQueries, _ connection: PostgresConnection, _ signal: NotificationHub.Subscription) async throws {
        var (beat, looked) = (ContinuousClock.now, ContinuousClock.now)
        // Collaborations decided and not yet folded by the projection: the stream position to wait
        // for, and their next `dueAt` as their state says (the view cannot say it until then).
        var unfolded: [String: Int64] = [:]
        var own: [String: Date] = [:]
        // Their states as this service appended them: the next decision starts from it without a
        // read (an append at its version is refused if anyone else appended since).
        var known: [String: CollaborationStreams.Current] = [:]
        while !Task.isCancelled {
            if ContinuousClock.now - beat >= .seconds(1) {
                beat = .now
                try await queries.recordHolder(taken: false, on: connection)
            }
            if ContinuousClock.now - looked >= Self.beat {
                looked = .now
                Self.overdue.record(try await queries.overdue())
            }
            // Collaborations a command has just given an earlier window end: decided now, from
            // their state (which the command changed: what this service knew of them is stale).
            // Any database login may NOTIFY: a payload that is no collaboration id (as the ledger
            // writes them: a lower-case UUID) is dropped, and so is one that names no collaboration.
            let hinted = signal.take().filter { (try? Identifiers.collaborationId($0)) == $0 }
            for collaboration in hinted { known[collaboration] = nil }
            // Decided on the database's clock, which dates the expiries: none is ever recorded
            // before its dueAt, whatever this host's clock says (SPEC "One clock").
            let round = try await queries.due(excluding: Array(unfolded.keys), limit: batch, on: connection)
            let now = round.now
            let folded = unfolded.filter { $0.value <= round.projected }.keys
            for collaboration in folded { (unfolded[collaboration], own[collaboration], known[collaboration]) = (nil, nil, nil) }
            let due = Array(hinted.union(round.collaborations).union(own.filter { $0.value <= now }.keys))
            if !due.isEmpty {
                for (collaboration, after) in try await expire(due, now: now, known: known, hinted: hinted) {
                    (unfolded[collaboration], own[collaboration], known[collaboration]) = (after.position, after.next, after.current)
                }
                continue
            }
            if !folded.isEmpty { continue }  // the view nominates them again: look at once
            // Nothing due: sleep until the next dueAt, a new window, or (while decisions wait to
            // be folded) a look at the fold, which its notification usually brings first.
            var sleep = min(maxSleep, Self.beat)
            for next in [round.next, own.values.min()].compactMap({ $0 }) {
                sleep = min(sleep, .milliseconds(max(1, Int64((next.timeIntervalSince(now) * 1000).rounded(.up)))))
            }
            if !unfolded.isEmpty { sleep = min(sleep, .milliseconds(250)) }
            _ = await signal.wait(timeout: sleep)
        }
    }

    /// What a decision left: the stream's position after it, its next `dueAt`, and (when this
    /// service appended) the collaboration as it left it.
    struct After: Sendable {
        var position: Int64
        var next: Date?
        var current: CollaborationStreams.Current?
    }

    /// Decides and appends the expiries due at `now` in `collaborations`; answers, for each one,
    /// its stream position after them (what the projection must reach before it nominates the
    /// collaboration again) and when its next window ends.
    func expire(
        _ collaborations: [String], now: Date, known: [String: CollaborationStreams.Current] = [:], hinted: Set<String> = []
    ) async throws -> [String: After] {
        var positions: [String: After] = [:]
        var open = collaborations
        var known = known
        for _ in 1...8 where !open.isEmpty {
            let wanted = Set(open)
            var states = known.filter { wanted.contains($0.key) }
            states.merge(try await CollaborationStreams(store: store).currents(open.filter { states[$0] == nil })) { $1 }
            known = [:]  // a retry reads them all
            var requests: [AppendRequest] = []
            var decided: [(String, [CollaborationEvent], CollaborationState)] = []
            for collaboration in open where states[collaboration] == nil && !hinted.contains(collaboration) {
                positions[collaboration] = After(position: .max, next: nil)  // no state: left alone while this lease lasts
                logger.error(
                    "expiry service: a collaboration with a window due has no state", metadata: ["collaboration": "\(collaboration)"])
            }
            for decision in await Self.decide(open.compactMap { id in states[id].map { (id, $0) } }, now: now) {
                positions[decision.collaboration] = decision.after
                guard let request = decision.request else { continue }
                requests.append(request)
                decided.append((decision.collaboration, decision.events, decision.state))
            }
            open = []
            let results = await store.appendAll(requests)
            for ((collaboration, events, state), result) in zip(decided, results) {
                switch result {
                case .success(let appended):
                    positions[collaboration]?.position = appended.lastPosition
                    positions[collaboration]?.current =
                        appended.duplicate
                        ? nil : CollaborationStreams.Current(state: state, version: appended.version, position: appended.lastPosition)
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
                    positions[collaboration] = After(position: .max, next: nil)
                    logger.error(
                        "expiry service: an expiry was refused", metadata: ["collaboration": "\(collaboration)", "error": "\(error)"])
                case .failure(let error):
                    throw error  // the database away: the lease is given up and taken again
                }
            }
        }
        return positions
    }

    /// One collaboration's expiries at `now`, decided on its state; `request` nil when none is due.
    struct Decision: Sendable {
        var collaboration: String
        var events: [CollaborationEvent]
        var state: CollaborationState
        var request: AppendRequest?
        var after: After
    }

    /// The metadata of every expiry: no actor (the ledger itself), written once.
    static let metadata = EventMetadata().json()

    /// Decides each collaboration on its state, in two halves on two tasks (encoding the events and
    /// states is most of a round's work; a round of 1,000 collaborations took 0.37 s on one).
    static func decide(_ states: [(String, CollaborationStreams.Current)], now: Date) async -> [Decision] {
        let half = (states.count + 1) / 2
        let parts = states.count < 64 ? [states[...]] : [states[..<half], states[half...]]
        return await withTaskGroup(of: [Decision].self) { group in
            for part in parts { group.addTask { part.map { decide($0.0, $0.1, now: now) } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
    }

    static func decide(_ collaboration: String, _ current: CollaborationStreams.Current, now: Date) -> Decision {
        let expiries = CollaborationDecisions.expiries(state: current.state, now: now)
        var next = current.state
        for expiry in expiries { next.apply(expiry.event) }
        var decision = Decision(
            collaboration: collaboration, events: expiries.map(\.event), state: next, request: nil,
            after: After(position: current.position, next: next.nextDue.map(date)))
        guard !expiries.isEmpty else { return decision }
        decision.request = AppendRequest(
            streamId: Streams.collaboration(collaboration), expectedVersion: .exact(current.version),
            events: expiries.map { NewEvent(eventId: $0.id, type: $0.event.type, data: $0.event.json, metadata: metadata) },
            state: next.json)
        return decision
    }

    static func date(_ micros: Int64) -> Date { Date(timeIntervalSince1970: Double(micros) / 1_000_000) }
}
