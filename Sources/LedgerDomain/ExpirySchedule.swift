import Foundation
import LedgerWire

/// When the expiry service looks again, given the database's time and the earliest window end
/// still pending: at once when one is due, else at that end, and at least every `beat` (its
/// progress record and the overdue gauge). Pure: the service brings both times from one
/// statement, so no host clock takes part (SPEC "One clock").
public enum ExpirySchedule {
    public static func sleep(now: Date, next: Date?, beat: Duration) -> Duration {
        guard let next else { return beat }
        let wait = RFC3339.micros(next) - RFC3339.micros(now)
        return wait <= 0 ? .zero : min(beat, .microseconds(wait))
    }
}
