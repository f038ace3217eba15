import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWire
import Logging
import Synchronization

/// A shard's requests while its database answers, and refused with 503 as soon as it does not:
/// before a request is sent, and while one waits.
extension ShardRouter {
    /// Shard `index`'s router, refused with 503 while its database does not answer or once it
    /// stops answering during the request (`whileAvailable`).
    func responder(_ index: Int) -> ShardFanOut.Responder {
        let (shard, available) = (shards[index], available[index])
        return { request, context in
            // The shard's own log lines (its access log, its errors) name it.
            let context = {
                var named = context
                named.logger[metadataKey: "shard"] = "\(index)"
                return named
            }()
            guard available(), let response = try await whileAvailable(index, { try await shard.respond(to: request, context: context) })
            else { throw Self.unavailable(shard: index) }
            return response
        }
    }

    /// `answer`'s response, or nil if shard `index` stops answering first: a request sent just
    /// before its database went away waits on its pool (PostgresNIO queues a lease while it cannot
    /// connect, up to its circuit breaker's minute), so it is let go as soon as the shard is seen
    /// down, and refused with 503 like the requests after it, never hung or a 500. The request is
    /// cancelled and left to end by itself (a query on a hung server may ignore cancellation);
    /// nothing it did is acknowledged, so a write it made counts as not made (SPEC: retriable).
    func whileAvailable(_ index: Int, _ answer: @escaping @Sendable () async throws -> Response) async throws -> Response? {
        let available = available[index]
        let waiting = Mutex<CheckedContinuation<Result<Response?, any Error>, Never>?>(nil)
        // The two tasks, and whether the caller was cancelled before they were stored.
        let started = Mutex<(tasks: [Task<Void, Never>], cancelled: Bool)>(([], false))
        let finish: @Sendable (Result<Response?, any Error>) -> Void = { result in
            waiting.withLock { continuation in
                continuation?.resume(returning: result)
                continuation = nil
            }
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiting.withLock { $0 = continuation }
                let tasks = [
                    Task {
                        do { finish(.success(try await answer())) } catch { finish(.failure(error)) }
                    },
                    // Also how a cancelled caller ends: its watcher stops at once.
                    Task {
                        while available() && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(100)) }
                        finish(.success(nil))
                    },
                ]
                let cancelled = started.withLock { state in
                    state.tasks = tasks
                    return state.cancelled
                }
                if cancelled { for task in tasks { task.cancel() } }
            }
        } onCancel: {
            let tasks = started.withLock { state in
                state.cancelled = true
                return state.tasks
            }
            for task in tasks { task.cancel() }
        }
        for task in started.withLock({ $0.tasks }) { task.cancel() }
        // A caller cancelled is not a shard down.
        if case .success(nil) = result { try Task.checkCancellation() }
        return try result.get()
    }

    /// `/ready`: the first shard's 200, asked of every shard that serves at once; else one
    /// shard's refusal (every shard draining answers 503 `shutting_down`), or 503 `not_ready`
    /// when none serves. One shard that fails its check, or that is going down and not seen yet,
    /// neither decides for the instance nor holds its answer.
    func ready(_ request: Request, context: Context) async throws -> Response {
        try await withThrowingTaskGroup(of: Response?.self) { group in
            for index in shards.indices where available[index]() {
                let shard = responder(index)
                group.addTask { try? await shard(request, context) }
            }
            var refusal: Response?
            while let answer = try await group.next() {
                guard let answer else { continue }
                if answer.status == .ok {
                    group.cancelAll()
                    return answer
                }
                refusal = refusal ?? answer
            }
            if let refusal { return refusal }
            throw DomainError(.notReady, "no shard's database answers")
        }
    }
}
