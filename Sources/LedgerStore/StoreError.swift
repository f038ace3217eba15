import Foundation
import LedgerDomain

/// Errors of the event store: a struct around a private enum so cases can grow.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        case versionConflict(stream: String, expected: ExpectedVersion, actual: Int64)
        case idempotencyMismatch(eventId: UUID)
        case invalidRequest(String)
    }
    let kind: Kind

    public static func versionConflict(stream: String, expected: ExpectedVersion, actual: Int64) -> StoreError {
        StoreError(kind: .versionConflict(stream: stream, expected: expected, actual: actual))
    }
    public static func idempotencyMismatch(eventId: UUID) -> StoreError {
        StoreError(kind: .idempotencyMismatch(eventId: eventId))
    }
    public static func invalidRequest(_ message: String) -> StoreError {
        StoreError(kind: .invalidRequest(message))
    }

    public var isVersionConflict: Bool {
        if case .versionConflict = kind { return true }
        return false
    }

    /// The stream version found by a conflicting append.
    public var actualVersion: Int64? {
        if case .versionConflict(_, _, let actual) = kind { return actual }
        return nil
    }

    public var isIdempotencyMismatch: Bool {
        if case .idempotencyMismatch = kind { return true }
        return false
    }

    public var description: String {
        switch kind {
        case .versionConflict(let stream, let expected, let actual):
            "version conflict on stream \(stream): expected \(expected), found version \(actual)"
        case .idempotencyMismatch(let id):
            "event id \(id) was already stored as part of a different append"
        case .invalidRequest(let message):
            "invalid append: \(message)"
        }
    }
}
