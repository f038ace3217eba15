import LedgerWire

/// The one error a refusal travels in, from any target up to the API: a code of the catalogue
/// (`ErrorCode`, whose entry gives the HTTP status), a readable message, and what some codes'
/// answers carry besides. The API answers it as `{"error": {code, message, reason?}}`; an error
/// of another type is looked up once, in the API's catalogue mapping (`CatalogueError`).
public struct DomainError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// For `proof_rejected`: why (the catalogue's `ProofRefusalReason`).
    public var reason: ProofRefusalReason?
    /// For a refusal that passes (a throttle, a view behind, the database away): seconds after
    /// which to retry (the answer's `Retry-After`).
    public var retryAfter: Int?
    /// For `method_not_allowed`: the methods the path serves (the answer's `Allow`).
    public var allow: String?

    public init(
        _ code: ErrorCode, _ message: String,
        reason: ProofRefusalReason? = nil, retryAfter: Int? = nil, allow: String? = nil
    ) {
        self.code = code
        self.message = message
        self.reason = reason
        self.retryAfter = retryAfter
        self.allow = allow
    }

    public static func invalid(_ message: String, code: ErrorCode = .invalidRequest) -> DomainError {
        DomainError(code, message)
    }

    /// 404 `not_found`: "<what> not found".
    public static func notFound(_ what: String) -> DomainError { DomainError(.notFound, "\(what) not found") }

    public static let collaborationNotFound = DomainError.notFound("collaboration")

    public var description: String { "\(code.rawValue): \(message)" }
}
