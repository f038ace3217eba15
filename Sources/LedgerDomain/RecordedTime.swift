import Foundation

/// A commit time in whole microseconds as RFC 3339 text with exactly six fractional digits
/// (`2026-11-23T10:00:00.123456Z`), so evidence documents carry the leaf's time exactly.
public enum RecordedTime {
    public static func text(micros: Int64) -> String {
        let (seconds, fraction) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        let (s, f) = fraction < 0 ? (seconds - 1, fraction + 1_000_000) : (seconds, fraction)
        let whole = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(s)))  // ...:SSZ
        let digits = String(f)
        return whole.dropLast() + "." + String(repeating: "0", count: 6 - digits.count) + digits + "Z"
    }

    /// The microseconds of `text`, nil unless it is in exactly the form `text(micros:)` writes.
    public static func micros(_ text: String) -> Int64? {
        guard text.hasSuffix("Z"), let dot = text.lastIndex(of: ".") else { return nil }
        let fraction = text[text.index(after: dot) ..< text.index(before: text.endIndex)]
        guard fraction.count == 6, fraction.allSatisfy({ $0.isASCII && $0.isNumber }), let f = Int64(fraction),
            let date = ISO8601DateFormatter().date(from: text[..<dot] + "Z")
        else { return nil }
        return Int64(date.timeIntervalSince1970) * 1_000_000 + f
    }
}
