import Logging

/// Runs `body` while `background` runs (a connection pool's `run()`), then cancels `background`
/// and waits for it to end for at most `bound`. Returns or throws as `body` did.
///
/// Why bounded: a pool's `run()` ends only once every task it started has ended, and PostgresNIO
/// 1.33 can leave one of them waiting for ever on a connection that closed (see
/// `queryUnlessClosed`). A process or test that awaited it would never finish its shutdown;
/// past the bound the pool is abandoned, logged, and left to the process's exit.
public func withBackground<T: Sendable>(
    _ background: @escaping @Sendable () async -> Void, stopWithin bound: Duration = .seconds(10),
    logger: Logger, _ body: () async throws -> T
) async throws -> T {
    let running = Task { await background() }
    let result: Result<T, any Error>
    do { result = .success(try await body()) } catch { result = .failure(error) }
    running.cancel()
    do {
        try await withDeadline(bound, "stopping the database pool") { await running.value }
    } catch let error as DeadlineExceeded {
        logger.error("\(error): it is abandoned, its connections left to the process's exit")
    } catch {
        // The caller was cancelled while waiting: it does not wait any longer.
    }
    return try result.get()
}
