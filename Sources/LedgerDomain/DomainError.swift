/// A refusal of a command or input: a stable code, a readable message and its kind, which the
/// HTTP edge maps to a status.
public struct DomainError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case invalid  // malformed or out-of-range input
        case unauthorized
        case forbidden
        case notFound
        case conflict
        case unprocessable  // well-formed but not acceptable in the current state
        case tooManyRequests
    }

    public var kind: Kind
    public var code: String
    public var message: String

    public init(_ kind: Kind, _ code: String, _ message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    public static func invalid(_ message: String, code: String = "invalid_request") -> DomainError {
        DomainError(.invalid, code, message)
    }

    public var description: String { "\(code): \(message)" }
}
