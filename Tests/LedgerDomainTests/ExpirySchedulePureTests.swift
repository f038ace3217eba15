import Foundation
import LedgerDomain
import Testing

/// The expiry service's sleep, from the database's time and the next window end alone.
@Suite("Expiry schedule")
struct ExpirySchedulePureTests {
    @Test("the schedule: at once when due, else at the next end, at least every beat")
    func schedule() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(ExpirySchedule.sleep(now: now, next: nil, beat: .seconds(10)) == .seconds(10))
        #expect(ExpirySchedule.sleep(now: now, next: now, beat: .seconds(10)) == .zero)
        #expect(ExpirySchedule.sleep(now: now, next: now.addingTimeInterval(-5), beat: .seconds(10)) == .zero)
        #expect(ExpirySchedule.sleep(now: now, next: now.addingTimeInterval(0.25), beat: .seconds(10)) == .milliseconds(250))
        #expect(ExpirySchedule.sleep(now: now, next: now.addingTimeInterval(3_600), beat: .seconds(10)) == .seconds(10))
    }
}
