import Foundation
import LedgerWire

/// When an identity may prove access (SPEC "Time-bound access"): from `notBefore` (inclusive)
/// until `notAfter` (exclusive), either bound absent for none. Kept in events as `RecordedTime`
/// text (UTC, exactly six fractional digits), so a window's bytes in the log are one spelling.
public struct AccessWindow: Codable, Sendable, Hashable {
    public var notBefore: String?
    public var notAfter: String?

    /// The window from dates, to the microsecond; refused (400 `invalid_window`) outside
    /// years 1–9999 or unless `notBefore` is before `notAfter`.
    public init(notBefore: Date?, notAfter: Date?) throws {
        try self.init(notBeforeMicros: notBefore.map(Self.micros), notAfterMicros: notAfter.map(Self.micros))
    }

    /// The window from a request's bounds in microseconds (exact, as `ParticipantsRequest` reads
    /// them); refused as above.
    public init(notBeforeMicros: Int64?, notAfterMicros: Int64?) throws {
        let start = try notBeforeMicros.map { try Self.checked($0, "notBefore") }
        let end = try notAfterMicros.map { try Self.checked($0, "notAfter") }
        if let start, let end, start >= end {
            throw DomainError.invalid("notBefore must be before notAfter", code: .invalidWindow)
        }
        self.notBefore = start.map(RecordedTime.text(micros:))
        self.notAfter = end.map(RecordedTime.text(micros:))
    }

    /// A window as stored (an event's fields), unchecked.
    public init(stored notBefore: String?, _ notAfter: String?) {
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    public var isUnbounded: Bool { notBefore == nil && notAfter == nil }
    public var notBeforeMicros: Int64? { notBefore.flatMap(RecordedTime.micros) }
    public var notAfterMicros: Int64? { notAfter.flatMap(RecordedTime.micros) }
    public var notBeforeDate: Date? { notBeforeMicros.map(RecordedTime.date(micros:)) }
    public var notAfterDate: Date? { notAfterMicros.map(RecordedTime.date(micros:)) }

    /// Why a proof at `now` falls outside the window, if it does.
    public func refusal(at now: Date) -> ProofRejection? {
        let micros = Self.micros(now)
        if let end = notAfterMicros, micros >= end { return .accessExpired }
        if let start = notBeforeMicros, micros < start { return .accessNotYetValid }
        return nil
    }

    static let earliest: Int64 = -62_135_596_800_000_000  // 0001-01-01T00:00:00Z
    static let latest: Int64 = 253_402_300_800_000_000  // 10000-01-01T00:00:00Z, excluded

    static func checked(_ micros: Int64, _ field: String) throws -> Int64 {
        guard micros >= earliest, micros < latest else {
            throw DomainError.invalid("\(field) must be a date in the years 1 to 9999", code: .invalidWindow)
        }
        return micros
    }

    static func micros(_ date: Date) -> Int64 { RFC3339.micros(date) }
}

/// A start's `defaultAccess`: the window every identity added without one gets, from the moment
/// it is added for `duration` (ISO 8601, `P7D`, `PT2S`, `P1Y2M`; years and months by the UTC
/// calendar). At least one second, at most 100 years.
public struct DefaultAccess: Codable, Sendable, Hashable {
    public var duration: String

    public init(duration: String) throws {
        guard Self.parse(duration) != nil else {
            throw DomainError.invalid(
                "defaultAccess.duration must be an ISO 8601 duration such as P7D or PT12H, of at least 1 second and at most 100 years",
                code: .invalidWindow)
        }
        self.duration = duration
    }

    /// A duration as a state stored it, unchecked, as `Decodable` reads it.
    init(stored duration: String) { self.duration = duration }

    /// The window of an identity added at `now`.
    public func window(from now: Date) -> AccessWindow {
        let end = Self.parse(duration).flatMap { Self.add($0, to: now) } ?? now
        return AccessWindow(stored: nil, RecordedTime.text(micros: AccessWindow.micros(end)))
    }

    struct Parts: Equatable {
        var years = 0, months = 0, weeks = 0, days = 0, hours = 0, minutes = 0
        var seconds = 0.0
    }

    /// `PnYnMnWnDTnHnMnS` (each part optional, at least one, seconds may have a fraction), nil
    /// when malformed or out of range.
    static func parse(_ text: String) -> Parts? {
        guard text.count <= 64, text.first == "P", text.allSatisfy(\.isASCII) else { return nil }
        var parts = Parts()
        var number = ""
        var inTime = false
        var seen = 0
        var order = -1  // each designator comes after the one before it: Y M W D, then T H M S
        for character in text.dropFirst() {
            if character == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                order = 4
                continue
            }
            if character.isNumber || (character == "." && inTime) {
                number.append(character)
                continue
            }
            guard !number.isEmpty, number.first != ".", number.last != "." else { return nil }
            let rank =
                (inTime ? ["H", "M", "S"].firstIndex(of: character).map { $0 + 5 } : ["Y", "M", "W", "D"].firstIndex(of: character))
            guard let rank, rank > order else { return nil }
            order = rank
            if character == "S" {
                guard inTime, let value = Double(number) else { return nil }
                parts.seconds = value
            } else {
                guard !number.contains("."), let value = Int(number), value <= 1_000_000 else { return nil }
                switch (character, inTime) {
                case ("Y", false): parts.years = value
                case ("M", false): parts.months = value
                case ("W", false): parts.weeks = value
                case ("D", false): parts.days = value
                case ("H", true): parts.hours = value
                case ("M", true): parts.minutes = value
                default: return nil
                }
            }
            number = ""
            seen += 1
        }
        guard number.isEmpty, seen > 0, !(inTime && text.hasSuffix("T")) else { return nil }
        let start = Date(timeIntervalSince1970: 0)
        guard let end = add(parts, to: start) else { return nil }
        let length = end.timeIntervalSince(start)
        guard length >= 1, length <= 100 * 366 * 86_400 else { return nil }
        return parts
    }

    static func add(_ parts: Parts, to date: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var components = DateComponents()
        components.year = parts.years
        components.month = parts.months
        components.day = parts.weeks * 7 + parts.days
        guard let shifted = calendar.date(byAdding: components, to: date) else { return nil }
        let seconds = Double(parts.hours) * 3600 + Double(parts.minutes) * 60 + parts.seconds
        guard seconds.isFinite else { return nil }
        return shifted.addingTimeInterval(seconds)
    }
}
