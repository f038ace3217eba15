import Foundation
import LedgerWire

/// A time in whole microseconds as RFC 3339 text with exactly six fractional digits
/// (`2026-11-23T10:00:00.123456Z`), so evidence documents carry the leaf's time exactly, and
/// windows' bounds are one spelling in the log. Written and read by integer arithmetic on the
/// proleptic Gregorian calendar (years 0001 to 9999; `RFC3339`'s), not a date formatter: the
/// expiry service reads every window's end on every decision, and a formatter per call cost
/// ~100 µs.
public enum RecordedTime {
    public static func text(micros: Int64) -> String {
        let (seconds, fraction) = floorDivide(micros, 1_000_000)
        let (days, second) = floorDivide(seconds, 86_400)
        let (year, month, day) = RFC3339.civil(days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(second / 3600, 2)):\(pad(second / 60 % 60, 2)):"
            + "\(pad(second % 60, 2)).\(pad(fraction, 6))Z"
    }

    /// The microseconds of `text`, nil unless it is in exactly the form `text(micros:)` writes.
    public static func micros(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 27, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "."), b[26] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                value = value * 10 + Int64(b[i] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), let fraction = number(20..<26),
            year >= 1, (1...12).contains(month), day >= 1, day <= RFC3339.daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = RFC3339.days(year: year, month: month, day: day)
        return ((days * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000) + fraction
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let (q, r) = a.quotientAndRemainder(dividingBy: b)
        return r < 0 ? (q - 1, r + b) : (q, r)
    }
}
