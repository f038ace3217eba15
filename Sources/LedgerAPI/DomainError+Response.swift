import Foundation
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerWire
import NIOCore

/// Every refusal leaves as an `ErrorBody`, `{"error": {"code", "message", "reason"?}}`, with the
/// status the catalogue (`ErrorCode`) gives its code, `Retry-After` and `Allow` when the refusal
/// carries them, and `WWW-Authenticate: Bearer` on a 401.
extension DomainError: HTTPResponseError {
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: code.status) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = ErrorBody(error: .init(code: code.rawValue, message: message, reason: reason?.rawValue))
        let data = try encoder.encode(body)
        var headers: HTTPFields = [:]
        if let retryAfter { headers[.retryAfter] = "\(retryAfter)" }
        if let allow { headers[.allow] = allow }
        headers[.contentType] = "application/json; charset=utf-8"
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
