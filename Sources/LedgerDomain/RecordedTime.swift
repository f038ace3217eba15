import Foundation
import LedgerWire

/// A time in whole microseconds as RFC 3339 text with exactly six fractional digits
/// (`2026-11-23T10:00:00.123456Z`), so evidence documents carry the leaf's time exactly, and
/// windows' bounds are one spelling in the log. Written and read by `RFC3339`'s integer calendar
/// arithmetic, not a date formatter: the expiry service reads every window's end on every
/// decision, and a formatter per call cost ~100 µs.
public enum RecordedTime {
    public static func text(micros: Int64) -> String { RFC3339.text(micros: micros) }

    /// `micros` since the epoch as a `Date`: the one conversion of the database's and the log's
    /// microseconds (back: `RFC3339.micros(_:)`, which rounds, so the round trip is exact).
    public static func date(micros: Int64) -> Date { Date(timeIntervalSince1970: Double(micros) / 1_000_000) }

    /// The microseconds of `text`, nil unless it is in exactly the form `text(micros:)` writes,
    /// from the year 0001 on.
    public static func micros(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 27, b[10] == UInt8(ascii: "T"), b[19] == UInt8(ascii: "."), b[26] == UInt8(ascii: "Z"),
            let instant = RFC3339.instant(text), instant.seconds >= -62_135_596_800  // 0001-01-01T00:00:00Z
        else { return nil }
        return instant.seconds * 1_000_000 + instant.nanos / 1_000
    }
}
