import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerWire

/// Access windows as tests set them, over the API through the SDK.
public enum TestWindows {
    /// A whole millisecond, as the API's dates are written.
    public static func kept(_ date: Date) -> Date { Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1_000).rounded() / 1_000) }

    /// Sets `people`'s windows to end `seconds` from now (`AccessWindowChanged`): how a test gives
    /// a granted identity a short window however long the grant took on a loaded machine.
    /// A request that took longer than the window (seen under the whole suite's load) is refused
    /// as ending in the past: it is sent again with a fresh start and a longer window (the
    /// window's length times the attempt), up to five times.
    public static func endIn(
        _ seconds: Double, _ owner: LedgerClient, _ id: String, _ people: [SimulatedPerson]
    ) async throws -> (due: Date, position: Int64) {
        for attempt in 1...5 {
            let now = Date()
            let due = kept(now.addingTimeInterval(seconds * Double(attempt)))
            do {
                let change = try await owner.updateParticipants(
                    windows: people.map { IdentityWindow(rootHash: $0.rootHashData, notBefore: kept(now), notAfter: due) }, in: id)
                return (due, change.position)
            } catch let error as LedgerError where error.code == "invalid_window" && attempt < 5 {
                continue
            }
        }
        preconditionFailure("the last attempt returns or throws")
    }
}
