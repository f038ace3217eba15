/// When the checkpointer acts, apart from what it acts on: at most one signature per `interval`
/// while appends go on, unanswered witnesses asked again every `probeEvery`, and a backoff while
/// the standbys have yet to flush. Generic over its clock, so tests drive it with a manual one
/// (`ManualClock`); the checkpointer runs it on `ContinuousClock`.
struct CheckpointCadence<C: Clock> where C.Duration == Duration {
    let clock: C
    let interval: Duration
    /// A witness that has not answered is asked again this often.
    static var probeEvery: Duration { .seconds(10) }
    private(set) var signed: C.Instant
    private(set) var probed: C.Instant

    /// A cadence that may sign at once, having just asked the witnesses.
    init(clock: C, interval: Duration) {
        self.clock = clock
        self.interval = interval
        signed = clock.now.advanced(by: .zero - interval)
        probed = clock.now
    }

    /// A checkpoint was signed now: the next may follow `interval` later.
    mutating func didSign() { signed = clock.now }

    /// Whether to ask the unanswered witnesses again now; if so, counted as asked.
    mutating func probeDue() -> Bool {
        guard probed.duration(to: clock.now) >= Self.probeEvery else { return false }
        probed = clock.now
        return true
    }

    /// How long to wait after `held` rounds in a row with trees waiting for the standbys: 20 ms,
    /// doubling each round up to 1 s.
    static func backoff(held: Int) -> Duration { .milliseconds(min(1000, 10 << min(max(held, 1), 7))) }

    /// Waits out the backoff of `held` rounds.
    func back(off held: Int) async throws { try await clock.sleep(for: Self.backoff(held: held)) }

    /// When the next round may begin.
    var nextRound: C.Instant { signed.advanced(by: interval) }

    /// Waits until the next round may begin (not at all once it may).
    func untilNextRound() async throws {
        if nextRound > clock.now { try await clock.sleep(until: nextRound, tolerance: nil) }
    }
}
