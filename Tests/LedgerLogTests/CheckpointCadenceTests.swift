import LedgerTestSupport
import Testing

@testable import LedgerLog

/// The checkpointer's cadence on a manual clock: no test here waits for real time to pass.
@Suite("Checkpoint cadence")
struct CheckpointCadenceTests {
    @Test("at most one signature per interval: the next round waits for the clock, not for time")
    func interval() async throws {
        let clock = ManualClock()
        var cadence = CheckpointCadence(clock: clock, interval: .milliseconds(200))
        #expect(cadence.nextRound <= clock.now, "nothing signed yet: the first round may sign at once")
        try await cadence.untilNextRound()  // returns without sleeping
        cadence.didSign()
        #expect(cadence.nextRound == clock.now.advanced(by: .milliseconds(200)))
        let signed = cadence
        let round = Task { try await signed.untilNextRound() }
        try await waitUntil(timeout: .seconds(60), "the round asleep on the clock") { clock.sleepers == 1 }
        clock.advance(by: .milliseconds(199))
        #expect(clock.sleepers == 1, "a millisecond early: still asleep")
        clock.advance(by: .milliseconds(1))
        try await round.value
        #expect(clock.sleepers == 0)
    }

    @Test("unanswered witnesses are asked again every 10 s of the clock, once each time")
    func probe() {
        let clock = ManualClock()
        var cadence = CheckpointCadence(clock: clock, interval: .milliseconds(200))
        var due = cadence.probeDue()
        #expect(!due, "just asked")
        clock.advance(by: .milliseconds(9_999))
        due = cadence.probeDue()
        #expect(!due)
        clock.advance(by: .milliseconds(1))
        due = cadence.probeDue()
        #expect(due)
        due = cadence.probeDue()
        #expect(!due, "counted as asked")
    }

    @Test("waiting for the standbys backs off from 20 ms, doubling up to 1 s, on the injected clock")
    func backoff() async throws {
        #expect((1...8).map(CheckpointCadence<ManualClock>.backoff) == [20, 40, 80, 160, 320, 640, 1000, 1000].map { .milliseconds($0) })
        let clock = ManualClock()
        let cadence = CheckpointCadence(clock: clock, interval: .milliseconds(200))
        let wait = Task { try await cadence.back(off: 3) }
        try await waitUntil(timeout: .seconds(60), "the backoff asleep on the clock") { clock.sleepers == 1 }
        clock.advance(by: .milliseconds(79))
        #expect(clock.sleepers == 1)
        clock.advance(by: .milliseconds(1))
        try await wait.value
    }

    @Test("a sleeper cancelled on the manual clock throws at once")
    func cancelled() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(60)), tolerance: nil) }
        try await waitUntil(timeout: .seconds(60), "asleep") { clock.sleepers == 1 }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleepers == 0)
    }
}
