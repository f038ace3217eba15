import Synchronization

/// An operation that did not finish in time and was abandoned.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public var operation: String
    public var limit: Duration
    public var description: String { "\(operation) did not finish within \(limit)" }
}

/// Runs `operation` with a deadline. On time it returns or throws as the operation did; past
/// the deadline it cancels the operation and throws `DeadlineExceeded` without waiting for it.
///
/// Why not waiting: a PostgresNIO query on a connection that died can stay pending forever and
/// ignores cancellation (PostgresNIO 1.33; `queryUnlessClosed` covers the cause found, a query
/// written to a closed connection, on leased connections; this is the net behind it).
/// A worker that awaited it would stop working for good; abandoning it costs one pooled
/// connection, and a pool that runs out is what `DatabaseWatchdog` restarts the process for.
/// A transaction abandoned this way never commits: nothing half-done is recorded.
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ operation: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.continuation.withLock { $0 = continuation }
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                race.finish(result)
                race.timer.withLock { $0?.cancel() }
            }
            race.work.withLock { $0 = work }
            let timer = Task {
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled else { return }
                if race.finish(.failure(DeadlineExceeded(operation: operation, limit: limit))) { work.cancel() }
            }
            race.timer.withLock { $0 = timer }
        }
    } onCancel: {
        race.work.withLock { $0?.cancel() }
        race.finish(.failure(CancellationError()))
        race.timer.withLock { $0?.cancel() }
    }
}

/// Who answers first: the operation, the timer or the caller's cancellation.
final class DeadlineRace<T: Sendable>: Sendable {
    let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)
    let work = Mutex<Task<Void, Never>?>(nil)
    let timer = Mutex<Task<Void, Never>?>(nil)

    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        guard
            let waiting = continuation.withLock({ current -> CheckedContinuation<T, any Error>? in
                defer { current = nil }
                return current
            })
        else { return false }
        waiting.resume(with: result)
        return true
    }
}
