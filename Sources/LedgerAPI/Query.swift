import Foundation
import Hummingbird
import LedgerDomain
import LedgerReadModel
import LedgerWire

/// The query parameters of the reads, each refused with a 400 naming it when malformed.
public enum Query {
    /// A text filter; NUL cannot be stored in PostgreSQL text, so it is refused here, as in tokens.
    public static func text(_ request: Request, _ name: String) throws -> String? {
        guard let raw = request.uri.queryParameters[name[...]] else { return nil }
        guard !raw.unicodeScalars.contains(where: { $0.value == 0 }), raw.count <= 256 else {
            throw DomainError.invalid("\(name) must be at most 256 characters, without NUL", code: .invalidQuery)
        }
        return String(raw)
    }

    /// `limit`: items in a page, 1 to 1,000 (default 100).
    public static func limit(_ request: Request) throws -> Int {
        guard let raw = request.uri.queryParameters["limit"] else { return PageCursors.defaultLimit }
        guard let value = Int(raw), (1...PageCursors.maxLimit).contains(value) else {
            throw DomainError.invalid("limit must be an integer from 1 to \(PageCursors.maxLimit)", code: .invalidQuery)
        }
        return value
    }

    /// `cursor`: a list's `nextCursor`, checked by `PageCursors`.
    public static func cursor(_ request: Request) throws -> String? {
        guard let raw = request.uri.queryParameters["cursor"] else { return nil }
        return String(raw)
    }

    public static func position(_ request: Request, _ name: String) throws -> Int64? {
        try integer(request, name, minimum: 0)
    }

    /// An optional integer parameter of at least `minimum` (and at most Int64.max).
    public static func integer(_ request: Request, _ name: String, minimum: Int64) throws -> Int64? {
        guard let raw = request.uri.queryParameters[name[...]] else { return nil }
        guard let value = Int64(raw), value >= minimum else {
            throw DomainError.invalid(
                minimum == 0 ? "\(name) must be a non-negative integer" : "\(name) must be an integer of \(minimum) or more",
                code: .invalidQuery)
        }
        return value
    }

    public static func time(_ request: Request, _ name: String) throws -> Date? {
        try instant(request, name).map(RFC3339.date)
    }

    /// The time `name` gives in whole microseconds, a finer fraction cut toward the past: the
    /// log's own unit, so "recorded at or before it" compares exactly.
    public static func micros(_ request: Request, _ name: String) throws -> Int64? {
        try instant(request, name).map(RFC3339.micros)
    }

    private static func instant(_ request: Request, _ name: String) throws -> (seconds: Int64, nanos: Int64)? {
        guard let raw = request.uri.queryParameters[name[...]] else { return nil }
        // Read exactly, as bodies are (RFC3339: the proleptic Gregorian calendar, a leap second,
        // up to nine fractional digits; a formatter read years before 1582 in the Julian
        // calendar), within the years 1 to 9999.
        guard let instant = RFC3339.instant(String(raw)), instant.seconds >= -62_135_596_800, instant.seconds < 253_402_300_800 else {
            throw DomainError.invalid("\(name) must be an RFC 3339 time (years 1 to 9999)", code: .invalidQuery)
        }
        return instant
    }
}
