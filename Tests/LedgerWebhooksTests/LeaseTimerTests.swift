import LedgerTestSupport
import Testing

@testable import LedgerWebhooks

/// A lane's reckoning of its webhook lease on a manual clock: no test here waits for real time.
@Suite("Webhook lease timer")
struct LeaseTimerTests {
    @Test("a delivery starts only while the lease outlasts its timeout, from the reading before the claim")
    func budget() {
        let clock = ManualClock()
        let timer = LeaseTimer(clock: clock, lease: .seconds(60), timeout: .seconds(10))
        #expect(timer.allowsDelivery, "just claimed")
        clock.advance(by: .seconds(49) + .milliseconds(999))
        #expect(timer.allowsDelivery, "a delivery started now ends 1 ms before the lease")
        clock.advance(by: .milliseconds(1))
        #expect(!timer.allowsDelivery, "it would end exactly when the lease does: not started")
        clock.advance(by: .seconds(3_600))
        #expect(!timer.allowsDelivery, "a lane that stalled gives the webhook back")
    }

    @Test("a renewal counts from the reading taken before its statement, not from when it was answered")
    func renewal() {
        let clock = ManualClock()
        var timer = LeaseTimer(clock: clock, lease: .seconds(60), timeout: .seconds(10))
        clock.advance(by: .seconds(45))
        let reading = timer.reading()
        clock.advance(by: .seconds(20))  // the renewal's statement took 20 s
        #expect(!timer.allowsDelivery, "before the renewal is recorded: 65 s since the claim")
        timer.renew(from: reading)
        #expect(timer.allowsDelivery, "20 s into a lease renewed 20 s ago: 30 s to spare")
        clock.advance(by: .seconds(30))
        #expect(!timer.allowsDelivery, "50 s after the reading: a delivery would end with the lease")
    }

    @Test("a timeout as long as the lease allows no delivery at all")
    func timeoutAsLongAsLease() {
        let clock = ManualClock()
        let timer = LeaseTimer(clock: clock, lease: .seconds(10), timeout: .seconds(10))
        #expect(!timer.allowsDelivery)
    }
}
