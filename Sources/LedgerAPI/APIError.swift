import Foundation
import LedgerPostgres
import Logging
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerStore
import LedgerWire
import PostgresNIO

/// Every refusal leaves as an `ErrorBody`, `{"error": {"code", "message", "reason"?}}`, with the
/// status the catalogue (`ErrorCode`) gives its code.
public struct APIError: HTTPResponseError, Sendable {
    public var code: ErrorCode
    public var message: String
    /// For `proof_rejected`: the verifier's reason.
    public var reason: String?
    /// Headers the refusal carries besides the JSON content type (`Allow` on a 405).
    public var headers: HTTPFields

    public init(_ code: ErrorCode, _ message: String, reason: String? = nil, headers: HTTPFields = [:]) {
        self.code = code
        self.message = message
        self.reason = reason
        self.headers = headers
    }

    public init(_ error: DomainError) {
        self.init(error.code, error.message, headers: error.retryAfter.map { [.retryAfter: "\($0)"] } ?? [:])
    }

    public var status: HTTPResponse.Status { HTTPResponse.Status(code: code.status) }

    public static func notFound(_ what: String) -> APIError { APIError(.notFound, "\(what) not found") }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(ErrorBody(error: .init(code: code.rawValue, message: message, reason: reason)))
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Turns every error into the JSON error shape; anything unexpected is a logged 500.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as DomainError {
            throw APIError(error)
        } catch let error as HTTPError {
            switch error.status {
            case .notFound: throw APIError(.routeNotFound, "no such endpoint: \(request.method) \(request.uri.path)")
            case .contentTooLarge: throw APIError(.payloadTooLarge, "request body exceeds the limit")
            case .methodNotAllowed: throw APIError(.methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path)")
            default: throw APIError(.httpError, error.body ?? error.status.reasonPhrase)
            }
        } catch let error where (error as? PSQLError)?.meansDatabaseUnavailable == true || error is ConnectionClosed {
            context.logger.warning("database unavailable", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(.databaseUnavailable, "the database is unavailable for the moment; retry",
                headers: [.retryAfter: "1"])
        } catch let error as DeadlineExceeded {
            // A database step that did not finish in time (a proof group's, a decision's): it may
            // still take effect, as with a call the server gave up on (`AbandoningResponder`).
            context.logger.warning("not answered in time", metadata: ["error": "\(error)"])
            throw APIError(.notAnswered, "the request was not answered in time; retry")
        } catch let error as StoreError where error.isVersionConflict {
            throw APIError(.concurrentUpdate, "the collaboration changed concurrently; retry")
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(.internalError, "internal error")
        }
    }
}
