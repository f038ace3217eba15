import Foundation
import LedgerDomain
import LedgerPostgres
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
/// **From the log.** Each collaboration's next window end is on its stream row
/// (`ledger_streams.next_due_at`), written by the append that changed its state
/// (Migrations/functions/ledger_stream_next_due.sql). A round reads the streams due at the
/// database's time (SPEC "One clock"), decides each on its inline state and appends; the append
/// moves the stream's next end, so nothing is decided twice and no view is waited for. After
/// downtime every overdue window is expired at once, its `dueAt` the window's end.
///
/// **Asleep until the next end** (`ExpirySchedule`): an append that gives a stream a new or earlier
/// end notifies `ledger_expiry`, which wakes it; so does its beat.
public struct ExpiryService: Service {
    /// Where the appends wake it (Migrations/functions/ledger_stream_next_due.sql).
    public static let channel = "ledger_expiry"
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
    /// Windows more than a second overdue, as every instance last saw (the `LedgerExpiryOverdue`
    /// alert), by shard (`ShardMetrics`).
    var overdue: Gauge { ShardMetrics.gauge("ledger_expiry_overdue", logger) }

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
                    logger.warning(
                        "expiry service: stopped; retrying", metadata: ["error": "\(DatabaseFailure.describe(error, reflecting: true))"])
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
        overdue.record(status.overdue)
        if let holder = status.holder, !holder.recognised {
            logger.warning(
                "expiry service: its lease is held by a session that is not an expiry service; no window expires while it holds it",
                metadata: ["application_name": "\(holder.applicationName)", "pid": "\(holder.pid)", "overdue": "\(status.overdue)"])
        }
    }

    /// The lease holder's loop: expire what is due, then sleep until the next end (at most
    /// `beat`: each round is recorded as progress, and the overdue windows looked at).
    private func work(_ queries: ExpiryQueries, _ connection: PostgresConnection, _ signal: NotificationHub.Subscription) async throws {
        var (beat, looked) = (ContinuousClock.now, ContinuousClock.now)
        // Collaborations left alone until the next beat (each is logged): their expiries were
        // refused, or their state cannot be read or decided. Looked at again every beat, so a
        // later window of the same collaboration is not held up for the lease's life, and one
        // cannot make the service spin.
        var refused: Set<String> = []
        // The states this service last wrote, each used only while its stream's row still has
        // that version (`CollaborationStreams.currents`): a collaboration due again soon after is
        // not read and decoded again. Dropped every beat, and before a round it would outgrow.
        var decoded: [String: CollaborationStreams.Current] = [:]
        while !Task.isCancelled {
            if ContinuousClock.now - beat >= .seconds(1) {
                beat = .now
                try await queries.recordHolder(taken: false, on: connection)
            }
            if ContinuousClock.now - looked >= Self.beat {
                looked = .now
                refused = []
                decoded = [:]
                overdue.record(try await queries.overdue())
            }
            // A notification only wakes the service (any database login may send one): what is
            // due is read from the streams.
            _ = signal.take()
            let round = try await queries.due(excluding: Array(refused), limit: batch, on: connection)
            if !round.collaborations.isEmpty {
                if decoded.count + round.collaborations.count > batch { decoded = [:] }
                refused.formUnion(try await expire(round.collaborations, now: round.now, decoded: &decoded))
                continue
            }
            _ = await signal.wait(timeout: ExpirySchedule.sleep(now: round.now, next: round.next, beat: min(maxSleep, Self.beat)))
        }
    }

    /// Decides and appends the expiries due at `now` in `collaborations`, each on its inline
    /// state, and returns those it must leave alone: refused by the store, or due by their
    /// stream row read with that state and not by the state (`ledger_next_due` and
    /// `CollaborationDecisions.expiries` disagreeing, which a store test rules out).
    func expire(
        _ collaborations: [String], now: Date, decoded: inout [String: CollaborationStreams.Current]
    ) async throws -> Set<String> {
        var refused: Set<String> = []
        var open = collaborations
        for _ in 1...8 where !open.isEmpty {
            let states = try await CollaborationStreams(store: store).currents(open, decoded: decoded)
            for collaboration in open where states[collaboration] == nil {
                // Due by its row, and no state it can read (one that does not decode).
                refused.insert(collaboration)
                logger.error(
                    "expiry service: a collaboration due has no state it can read", metadata: ["collaboration": "\(collaboration)"])
            }
            var requests: [AppendRequest] = []
            var decided: [(String, [CollaborationEvent], CollaborationState)] = []
            for (collaboration, events, request, next) in await Self.decide(open.compactMap { id in states[id].map { (id, $0) } }, now: now)
            {
                guard let request else {
                    // Nothing due by the state. A command appended since the round read the rows
                    // (and moved its row's end with it): nothing to do. The row, read with the
                    // state, still due: the rule and the decision disagree, so it is left alone.
                    if let due = states[collaboration]?.nextDueAt, due <= now {
                        refused.insert(collaboration)
                        logger.error(
                            "expiry service: a stream due by its row has nothing due by its state",
                            metadata: ["collaboration": "\(collaboration)"])
                    }
                    continue
                }
                requests.append(request)
                decided.append((collaboration, events, next))
            }
            open = []
            let results = await store.appendAll(requests)
            for ((collaboration, events, next), result) in zip(decided, results) {
                switch result {
                case .success(let appended):
                    guard !appended.duplicate else { continue }
                    decoded[collaboration] = .init(state: next, version: appended.version, position: appended.lastPosition)
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
                    refused.insert(collaboration)
                    logger.error(
                        "expiry service: an expiry was refused", metadata: ["collaboration": "\(collaboration)", "error": "\(error)"])
                case .failure(let error):
                    throw error  // the database away: the lease is given up and taken again
                }
            }
        }
        return refused
    }

    /// The metadata of every expiry: no actor (the ledger itself), written once.
    static let metadata = EventMetadata().json()

    /// Decides each collaboration on its state (`CollaborationDecisions.expired`) into the append
    /// of its expiries (nil: none due), in two halves on two tasks when there are many: encoding
    /// the events and states is most of a large round's work.
    static func decide(
        _ states: [(String, CollaborationStreams.Current)], now: Date
    ) async -> [(String, [CollaborationEvent], AppendRequest?, CollaborationState)] {
        let half = (states.count + 1) / 2
        let parts = states.count < 64 ? [states[...]] : [states[..<half], states[half...]]
        return await withTaskGroup(of: [(String, [CollaborationEvent], AppendRequest?, CollaborationState)].self) { group in
            for part in parts {
                group.addTask {
                    part.map { id, current in
                        let (expiries, next) = CollaborationDecisions.expired(state: current.state, now: now)
                        guard !expiries.isEmpty else { return (id, [], nil, next) }
                        let request = AppendRequest(
                            streamId: Streams.collaboration(id), expectedVersion: .exact(current.version),
                            events: expiries.map { NewEvent(eventId: $0.id, type: $0.event.type, data: $0.event.json, metadata: metadata) },
                            state: next.json)
                        return (id, expiries.map(\.event), request, next)
                    }
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
    }
}
