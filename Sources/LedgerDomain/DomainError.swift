import LedgerWire

/// A refusal of a command or input: what went wrong, as a code of the catalogue (`ErrorCode`,
/// whose entry gives the HTTP status) and a readable message.
public struct DomainError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// For a refusal that passes (a throttle, a view behind): seconds after which to retry.
    public var retryAfter: Int?

    public init(_ code: ErrorCode, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public static func invalid(_ message: String, code: ErrorCode = .invalidRequest) -> DomainError {
        DomainError(code, message)
    }

    public static let collaborationNotFound = DomainError(.notFound, "collaboration not found")

    public var description: String { "\(code.rawValue): \(message)" }
}
