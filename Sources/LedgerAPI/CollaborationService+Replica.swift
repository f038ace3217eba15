import LedgerPostgres
import Logging
import PostgresNIO
import Synchronization

/// Reads from a hot standby (`LEDGER_READ_DATABASE_URL`): the projector folds the views on the
/// primary, and streaming replication brings them, with the log, to the standby.
extension CollaborationService {
    /// The service to read with: on the standby when its views have reached `minPosition` (or
    /// none is asked: an answer that may lag the primary by the replication delay, as any read of
    /// the views may lag the log). A standby that is behind a `minPosition`, or does not answer
    /// within a second, degrades to the primary, which waits for its own views as without a
    /// standby (then 503 `view_behind`): never a stale answer for a `minPosition` read, and the
    /// standby's lag costs the reads that asked for more than it has one query, not an error.
    public func reader(minPosition: Int64?) async throws -> CollaborationService {
        if let standby, !standbyPause.active {
            let onStandby = reading(from: standby)
            do {
                let position = try await withDeadline(.seconds(1), "reading the standby's view position") {
                    try await onStandby.viewPosition()
                }
                if minPosition.map({ position >= $0 }) ?? true { return onStandby }
                logger.debug("read replica behind minPosition; reading from the primary", metadata: ["standby": "\(position)"])
            } catch {
                // Not asked again for a while: each read would otherwise wait for it first.
                standbyPause.start(for: .seconds(5))
                logger.warning(
                    "read replica unavailable; reading from the primary for 5 s", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
        let onPrimary = reading(from: primary)
        try await onPrimary.waitFor(position: minPosition)
        return onPrimary
    }
}

/// A standby that did not answer is left alone until this passes (shared by every request).
final class StandbyPause: Sendable {
    private let until = Mutex<ContinuousClock.Instant?>(nil)

    var active: Bool { until.withLock { $0.map { ContinuousClock.now < $0 } ?? false } }
    func start(for duration: Duration) { until.withLock { $0 = ContinuousClock.now + duration } }
}
