import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerWire
import Logging

/// Turns every error into the JSON error shape, through the catalogue: Hummingbird's own
/// refusals by their status, every other error by its `CatalogueError` entry (a `DomainError`
/// as it is). A request cancelled while it ran is answered 503 (nobody reads it). Anything else is
/// unexpected: logged, and answered 500 `internal_error`.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            throw Self.refusal(error, request: request)
        } catch {
            // Cancelled (its client gone, or let go by the shard front once its shard was seen
            // down: `ShardRouter.whileAvailable`): no fault of the server's, and nobody reads the answer.
            if Task.isCancelled {
                context.logger.info("request cancelled", metadata: ["error": "\(String(reflecting: error))"])
                throw DomainError(.databaseUnavailable, "the request was cancelled before it was answered; retry", retryAfter: 1)
            }
            guard let refusal = DomainError(answering: error) else {
                context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
                throw DomainError(.internalError, "internal error")
            }
            // The server's own trouble (the database away, a deadline missed, the log unable to
            // serve) is worth a line with its cause; a refusal the code chose is in the access log.
            if !(error is DomainError), refusal.code.status >= 500 {
                context.logger.warning("\(refusal.code.rawValue)", metadata: ["error": "\(String(reflecting: error))"])
            }
            throw refusal
        }
    }

    /// Hummingbird's refusals: no such route, a body over its limit, a method not served, a
    /// request it could not read.
    static func refusal(_ error: HTTPError, request: Request) -> DomainError {
        switch error.status {
        case .notFound: DomainError(.routeNotFound, "no such endpoint: \(request.method) \(request.uri.path)")
        case .contentTooLarge: DomainError(.payloadTooLarge, "request body exceeds the limit")
        case .methodNotAllowed: DomainError(.methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path)")
        default: DomainError(.httpError, error.body ?? error.status.reasonPhrase)
        }
    }
}
