import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle

/// A projector worker: keeps every projection it can lease up to date with the log.
///
/// **Exactly once.** A batch is one transaction: lock the projection's row, check this
/// worker still owns it, apply the range (position, to] with the projection's SQL function,
/// move the checkpoint to `to`, renew the lease (one statement, `ledger_project_step`), commit.
/// A crash anywhere rolls the whole batch back, so an event is neither skipped nor applied twice.
///
/// **One owner.** A worker leases a projection for `leaseDuration` and renews it with each
/// batch (and while idle); another takes over only after the lease has expired. The owner
/// check under the row lock fences a worker whose lease was taken while it was stalled.
///
/// **Poison.** A range that fails is retried event by event to find the first event that
/// cannot be applied; the events before it are applied, and the projection stops with that
/// position and error in `ledger_projections` (status, metrics) instead of skipping it.
///
/// **Batches under load.** After a step that applied events the worker waits `gather`
/// (`LEDGER_FOLLOW_INTERVAL`) before the next; when it waits for a notification instead, one that
/// comes sooner than `gather` after the last it woke for waits out the rest
/// (`NotificationHub.register(spacing:)`). So a busy log is projected a batch
/// of events at a time rather than the few that arrived during the last step: a step's fixed
/// cost (its transaction, the leases, each projection's function and checkpoint) had been
/// 0.4 ms of the machine's CPU per command (docs/BENCHMARKS.md, issue 47). The first event
/// after a quiet `gather` is projected as soon as it is notified.
public struct ProjectorWorker: Service {
    public let id: String
    let client: PostgresClient
    let events: NotificationHub
    let logger: Logger
    let projections: [Projection]
    let batchSize: Int64
    let leaseDuration: Duration
    let pollInterval: Duration
    let gather: Duration
    let hooks: Hooks

    /// Test seams.
    public struct Hooks: Sendable {
        /// Inside the batch transaction, after every range of the step was applied and its
        /// checkpoint moved, before the commit; once for each range.
        public var afterApply: (@Sendable (Projection, Int64, Int64) async throws -> Void)?
        /// After a batch committed: (worker, projection, from, to).
        public var committed: (@Sendable (String, Projection, Int64, Int64) -> Void)?

        public init(
            afterApply: (@Sendable (Projection, Int64, Int64) async throws -> Void)? = nil,
            committed: (@Sendable (String, Projection, Int64, Int64) -> Void)? = nil
        ) {
            self.afterApply = afterApply
            self.committed = committed
        }
    }

    public init(
        client: PostgresClient, events: NotificationHub, logger: Logger, id: String = "projector-\(UUID().uuidString.prefix(8))",
        projections: [Projection] = Projection.allCases, batchSize: Int64 = 5_000, leaseDuration: Duration = .seconds(5),
        pollInterval: Duration = .seconds(1), gather: Duration = NotificationHub.followInterval, hooks: Hooks = Hooks()
    ) {
        self.hooks = hooks
        self.id = id
        self.client = client
        self.events = events
        self.logger = logger
        self.projections = projections
        self.batchSize = batchSize
        self.leaseDuration = leaseDuration
        self.pollInterval = pollInterval
        self.gather = gather
    }

    public func run() async throws {
        let wake = events.register(spacing: gather)
        defer { wake.cancel() }
        try await cancelWhenGracefulShutdown {
            var reported = ContinuousClock.now - .seconds(10)
            while !Task.isCancelled {
                if ContinuousClock.now - reported > .seconds(1) {
                    reported = ContinuousClock.now
                    await reportLag()
                }
                var busy = false
                do {
                    // Bounded: a batch stuck on a dead connection is abandoned (it never
                    // commits, so no checkpoint moves) and the next step retries.
                    let projections = projections
                    busy = try await withDeadline(.seconds(60), "projecting") { try await step(projections) }
                } catch {
                    if Task.isCancelled { break }
                    logger.warning(
                        "projector: step failed; retrying", metadata: ["error": "\(DatabaseFailure.describe(error, reflecting: true))"])
                }
                if busy {
                    try? await Task.sleep(for: gather)
                } else {
                    await wake.wait(timeout: pollInterval)
                }
            }
        }
    }

    /// Lag gauges for `/metrics`: events and seconds behind the log, and stops, per projection.
    func reportLag() async {
        // Bounded like a batch: after a PostgreSQL restart a lease from the pool can wait for good
        // (see `DatabaseWatchdog`), and the worker must go on projecting.
        let (client, logger) = (client, logger)
        guard
            let statuses = try? await withDeadline(
                .seconds(10), "reading the projections' lag",
                {
                    try await ProjectionQueries.status(client: client, logger: logger)
                })
        else { return }
        for status in statuses {
            ShardMetrics.gauge("ledger_projection_lag_events", logger, [("projection", status.name)]).record(status.lagEvents)
            ShardMetrics.gauge("ledger_projection_lag_seconds", logger, [("projection", status.name)]).record(status.lagSeconds)
            ShardMetrics.gauge("ledger_projection_position", logger, [("projection", status.name)]).record(status.position)
            ShardMetrics.gauge("ledger_projection_stopped", logger, [("projection", status.name)])
                .record(status.status == "running" ? 0 : 1)
        }
    }

    /// Leases `projection` if free and applies one batch; true if it applied events.
    @discardableResult
    public func step(_ projection: Projection) async throws -> Bool {
        try await step([projection])
    }

    /// Leases what it can of `projections` and applies one batch of each, in one transaction;
    /// true if it applied events. A range the database refuses is retried projection by
    /// projection, to find the event that cannot be applied (see "Poison").
    @discardableResult
    public func step(_ projections: [Projection]) async throws -> Bool {
        do {
            return try await applyRange(projections, limit: batchSize)
        } catch let error as PSQLError where error.isDataError {
            for projection in projections {
                do {
                    _ = try await applyRange([projection], limit: batchSize)
                } catch let failure as PSQLError where failure.isDataError {
                    try await isolatePoison(projection, error: failure)
                }
            }
            return false
        }
    }

    /// One batch transaction: `ledger_project_step` (Migrations/functions) takes or renews the
    /// leases (the rows locked, so a worker whose lease another took meanwhile applies nothing),
    /// applies each leased projection's range (checkpoint, min(checkpoint + limit, head)] and
    /// moves its checkpoint, in one statement; then the commit. Three round trips a step however
    /// many projections it applies (there were seven for three). True if it applied events.
    func applyRange(_ projections: [Projection], limit: Int64) async throws -> Bool {
        let started = ContinuousClock.now
        let applied = try await client.transaction(logger: logger) { connection -> [(Projection, Int64, Int64)] in
            let rows = try await connection.queryUnlessClosed(
                """
                SELECT projection, from_position, to_position FROM ledger_project_step(
                    \(id), \(Self.interval(leaseDuration))::interval, \(projections.map(\.rawValue)), \(limit))
                """, logger: logger)
            var ranges: [(Projection, Int64, Int64)] = []
            for try await (name, from, to) in rows.decode((String, Int64, Int64).self) {
                guard let projection = Projection(rawValue: name) else { continue }
                ranges.append((projection, from, to))
            }
            for (projection, from, to) in ranges { try await hooks.afterApply?(projection, from, to) }
            return ranges
        }
        for (projection, from, to) in applied {
            hooks.committed?(id, projection, from, to)
            Timer(label: "ledger_projection_batch_duration", dimensions: [("projection", projection.rawValue)])
                .record(duration: ContinuousClock.now - started)
            Counter(label: "ledger_projection_events_total", dimensions: [("projection", projection.rawValue)])
                .increment(by: Int(to - from))
        }
        return !applied.isEmpty
    }

    /// Applies single events until one fails, then records the stop.
    private func isolatePoison(_ projection: Projection, error: PSQLError) async throws {
        while true {
            do {
                guard try await applyRange([projection], limit: 1) else { return }
            } catch let failure as PSQLError where failure.isDataError {
                let message = failure.serverInfo?[.message] ?? "\(failure)"
                // The lease is taken in the same statement, by the step's rule (`ledger_may_lease`):
                // the failed step's rollback undid its own take, so a worker that had not committed
                // a step on this projection yet (fresh, or one that took over) would record no stop.
                let stopped = try await client.queryUnlessClosed(
                    """
                    UPDATE ledger_projections
                    SET status = 'stopped', error = \(message), error_position = position + 1, updated_at = now(),
                        owner = \(id), lease_until = now() + \(Self.interval(leaseDuration))::interval
                    WHERE name = \(projection.rawValue) AND ledger_may_lease(status, owner, lease_until, \(id))
                    RETURNING error_position
                    """, logger: logger
                ) { rows in
                    var positions: [Int64] = []
                    for try await position in rows.decode(Int64.self) { positions.append(position) }
                    return positions
                }
                for position in stopped {
                    logger.error(
                        "projection stopped: an event cannot be applied",
                        metadata: [
                            "projection": "\(projection.rawValue)", "position": "\(position)", "error": "\(message)",
                        ])
                    Counter(label: "ledger_projection_stops_total", dimensions: [("projection", projection.rawValue)]).increment()
                }
                return
            }
        }
    }

    static func interval(_ duration: Duration) -> String {
        "\(duration.seconds) seconds"
    }
}
