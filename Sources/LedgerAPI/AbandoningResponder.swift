import Hummingbird
import LedgerDomain
import LedgerPostgres
import LedgerWire

/// Runs each request's handler so that it can be abandoned: when the server is cancelled (the
/// end of a graceful shutdown that took too long) or after `limit`, the request is answered
/// 503 without waiting for the handler.
///
/// Why: a handler waiting on a pooled PostgresNIO query sent to a connection that had just
/// closed (PostgreSQL restarting) never finishes and ignores cancellation (see
/// `queryUnlessClosed`). Awaited, it held the server's shutdown until ServiceLifecycle's
/// cancellation timeout crashed the process. The abandoned handler keeps its pooled
/// connection; a pool that runs out is what `DatabaseWatchdog` restarts the process for.
public struct AbandoningResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context: Sendable {
    public typealias Context = Inner.Context
    let inner: Inner
    var limit: Duration = .seconds(600)

    public init(inner: Inner) {
        self.inner = inner
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        do {
            return try await withDeadline(limit, "answering \(request.method) \(request.uri.path)") {
                try await inner.respond(to: request, context: context)
            }
        } catch is DeadlineExceeded {
            throw DomainError(.notAnswered, "the request was not answered in time; retry")
        }
    }
}
