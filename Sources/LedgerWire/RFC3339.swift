import Foundation

/// RFC 3339 times as request bodies carry them: parsed strictly (`YYYY-MM-DDTHH:MM:SS`, an
/// optional fraction of 1 to 9 digits, then `Z` or `±HH:MM`; `t` and `z` as well), exactly
/// (whole seconds by calendar arithmetic, no formatter's leniency), and written in UTC with six
/// fractional digits (`2026-05-01T09:00:00.000000Z`). A leap second (`23:59:60` UTC, RFC 3339
/// §5.7) is read as the last nanosecond of its minute: POSIX time, as the database's, has no
/// 61st second, and the time still sorts before the next minute.
public enum RFC3339 {
    /// The time `text` names, nil unless it is an RFC 3339 date-time (years 0000 to 9999).
    public static func date(_ text: String) -> Date? { instant(text).map(date) }

    /// An exact instant as a `Date`. Far from 1970 a `Double` cannot hold every nanosecond; it
    /// is never rounded up into the next second (`9999-12-31T23:59:59.99999Z` stays in 9999).
    package static func date(_ instant: (seconds: Int64, nanos: Int64)) -> Date {
        let value = Double(instant.seconds) + Double(instant.nanos) / 1_000_000_000
        let next = Double(instant.seconds + 1)
        return Date(timeIntervalSince1970: value < next ? value : next.nextDown)
    }

    /// An exact instant in whole microseconds (a finer fraction cut toward the past, so a time in
    /// the year 9999 stays there).
    package static func micros(_ instant: (seconds: Int64, nanos: Int64)) -> Int64 {
        instant.seconds * 1_000_000 + instant.nanos / 1_000
    }

    /// `date` in whole microseconds (rounded); a date no `Int64` of microseconds holds (infinite,
    /// NaN or beyond ±292,000 years) as the nearest end, which every range check refuses.
    package static func micros(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard value.isFinite else { return value.isNaN || value < 0 ? .min : .max }
        return value >= 9.2e18 ? .max : value <= -9.2e18 ? .min : Int64(value)
    }

    /// The instant `text` names, exactly: whole seconds since 1970-01-01T00:00:00Z and the
    /// nanoseconds after them; nil unless it is an RFC 3339 date-time (years 0000 to 9999).
    package static func instant(_ text: String) -> (seconds: Int64, nanos: Int64)? {
        let b = Array(text.utf8)
        guard b.count >= 20, b.count <= 40 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                value = value * 10 + Int64(b[i] - 0x30)
            }
            return value
        }
        let colon: UInt8 = 0x3A
        let dash: UInt8 = 0x2D
        guard let year = number(0..<4), b[4] == dash, let month = number(5..<7), b[7] == dash, let day = number(8..<10),
            b[10] == 0x54 || b[10] == 0x74,  // T t
            let hour = number(11..<13), b[13] == colon, let minute = number(14..<16), b[16] == colon, let second = number(17..<19),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var i = 19
        var nanos: Int64 = 0
        if b[i] == 0x2E {  // .
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                guard digits < 9 else { return nil }
                nanos = nanos * 10 + Int64(b[i] - 0x30)
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanos *= 10 }
        }
        guard i < b.count else { return nil }
        var offset: Int64 = 0
        switch b[i] {
        case 0x5A, 0x7A:  // Z z
            guard i + 1 == b.count else { return nil }
        case 0x2B, dash:  // + -
            guard i + 6 == b.count, let h = number(i + 1..<i + 3), b[i + 3] == colon, let m = number(i + 4..<i + 6), h <= 23, m <= 59
            else { return nil }
            offset = (h * 3600 + m * 60) * (b[i] == dash ? -1 : 1)
        default:
            return nil
        }
        let seconds = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        guard second == 60 else { return (seconds, nanos) }
        // A leap second: only in the last minute of a UTC day; its last nanosecond.
        let lastMinute = (seconds - 60) % 86_400  // from the UTC day's start (negative before 1970)
        guard lastMinute == 86_340 || lastMinute == -60 else { return nil }
        return (seconds - 1, 999_999_999)
    }

    /// `date` in UTC with six fractional digits; nil outside the years 0000 to 9999 (or not finite).
    public static func text(_ date: Date) -> String? {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, interval >= -62_167_219_200, interval < 253_402_300_800 else { return nil }
        let micros = micros(date)
        guard micros < 253_402_300_800_000_000 else { return nil }  // rounded up into the year 10000
        return text(micros: micros)
    }

    /// An instant in whole microseconds since 1970 in UTC with six fractional digits
    /// (`2026-05-01T09:00:00.000000Z`); the years 0000 to 9999 are written as four digits.
    package static func text(micros: Int64) -> String {
        let (q, r) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        let (seconds, fraction) = r < 0 ? (q - 1, r + 1_000_000) : (q, r)
        let (d, s) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (dayNumber, second) = s < 0 ? (d - 1, s + 86_400) : (d, s)
        let (year, month, day) = civil(dayNumber)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(second / 3600, 2)):\(pad(second / 60 % 60, 2)):"
            + "\(pad(second % 60, 2)).\(pad(fraction, 6))Z"
    }

    /// The time at `key`, as a `Date` and exactly in microseconds.
    static func decodeIfPresent<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> (date: Date, micros: Int64)? {
        guard let text = try c.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let instant = Self.instant(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: c, debugDescription: "not an RFC 3339 time such as 2026-05-01T09:00:00Z")
        }
        return (date(instant), micros(instant))
    }

    static func encodeIfPresent<K: CodingKey>(_ date: Date?, _ c: inout KeyedEncodingContainer<K>, _ key: K) throws {
        guard let date else { return }
        guard let text = Self.text(date) else {
            throw EncodingError.invalidValue(
                date, .init(codingPath: c.codingPath + [key], debugDescription: "a time in the years 0000 to 9999"))
        }
        try c.encode(text, forKey: key)
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day number (`civil_from_days`).
    static func civil(_ dayNumber: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
