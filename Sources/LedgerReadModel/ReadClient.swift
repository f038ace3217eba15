import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerWire
import Logging
import PostgresNIO
import Synchronization

/// Where the reads go. The views are folded on the primary; with a streaming-replication hot
/// standby (`LEDGER_READ_DATABASE_URL`), replication brings them, with the log, to the standby,
/// and reads go there when its views have reached the `minPosition` asked for (or none is
/// asked: an answer that may lag the primary by the replication delay, as any read of the
/// views may lag the log). A standby behind a `minPosition`, or one that does not answer within
/// a second (then left alone for 5 s), sends the read to the primary, which waits for its own
/// views (up to `readWait`, then 503 `view_behind`): never a stale answer for a `minPosition`
/// read.
public final class ReadClient: Sendable {
    let primary: PostgresClient
    let standby: PostgresClient?
    let store: EventStore
    let logger: Logger
    let readWait: Duration
    /// Signs and checks the list reads' paging cursors.
    public let cursors: PageCursors
    private let standbyPausedUntil = Mutex<ContinuousClock.Instant?>(nil)

    public init(
        primary: PostgresClient, standby: PostgresClient? = nil, store: EventStore, logger: Logger, readWait: Duration = .seconds(2)
    ) {
        self.primary = primary
        self.standby = standby
        self.store = store
        self.logger = logger
        self.readWait = readWait
        self.cursors = PageCursors(client: primary, logger: logger)
    }

    /// The reads of a database whose views have reached `minPosition`.
    public func reads(minPosition: Int64? = nil) async throws -> Reads {
        if let standby, !standbyPaused {
            let onStandby = Reads(client: standby, cursors: cursors, logger: logger)
            do {
                let position = try await withDeadline(.seconds(1), "reading the standby's view position") {
                    try await onStandby.viewPosition()
                }
                if minPosition.map({ position >= $0 }) ?? true { return onStandby }
                logger.debug("read replica behind minPosition; reading from the primary", metadata: ["standby": "\(position)"])
            } catch {
                standbyPausedUntil.withLock { $0 = ContinuousClock.now + .seconds(5) }
                logger.warning(
                    "read replica unavailable; reading from the primary for 5 s",
                    metadata: ["error": "\(DatabaseFailure.describe(error, reflecting: true))"])
            }
        }
        let onPrimary = Reads(client: primary, cursors: cursors, logger: logger)
        try await waitFor(position: minPosition, on: onPrimary)
        return onPrimary
    }

    private var standbyPaused: Bool { standbyPausedUntil.withLock { $0.map { ContinuousClock.now < $0 } ?? false } }

    /// Waits (up to `readWait`) until every view has reached `position`. A view still behind
    /// then is a 503 `view_behind` with Retry-After, never an answer from before `position`.
    public func waitFor(position: Int64?) async throws {
        try await waitFor(position: position, on: Reads(client: primary, cursors: cursors, logger: logger))
    }

    private func waitFor(position: Int64?, on reads: Reads) async throws {
        guard let position else { return }
        // The usual case, one query: the views are there already.
        if try await reads.viewPosition() >= position { return }
        // Past the head, no write was ever acknowledged there: waiting could not help.
        let head = try await store.head().position
        guard position <= head else {
            throw DomainError.invalid("minPosition \(position) is past the log's head (\(head))", code: .invalidQuery)
        }
        let reached = try await ProjectionQueries.waitFor(
            position, projections: Projection.allCases, client: primary, logger: logger, timeout: readWait)
        guard reached >= position else {
            throw DomainError(
                .viewBehind, "the views are at position \(reached), behind minPosition \(position); retry shortly", retryAfter: 1)
        }
    }
}
