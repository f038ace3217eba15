/// A lane's own reckoning of its webhook lease, on its clock: the lease runs from the last time
/// it was taken or renewed, read *before* the statement that did it (so the lane never believes
/// it has more of the lease than the database granted), and a delivery starts only while the
/// lease will outlast it. A lane that stalled gives the webhook back rather than deliver beside
/// the worker that may have taken it over.
struct LeaseTimer<C: Clock>: Sendable where C.Duration == Duration {
    let clock: C
    /// How long a lease lasts once taken or renewed.
    let lease: Duration
    /// The longest one delivery may take.
    let timeout: Duration
    private(set) var renewed: C.Instant

    /// Made before the claim's statement: the lease runs from no later than now.
    init(clock: C, lease: Duration, timeout: Duration) {
        self.clock = clock
        self.lease = lease
        self.timeout = timeout
        self.renewed = clock.now
    }

    /// Whether a delivery started now ends, at its timeout, before the lease does.
    var allowsDelivery: Bool { clock.now.advanced(by: timeout) < renewed.advanced(by: lease) }

    /// The reading to take before a renewal's statement; pass it to `renew(from:)` once the
    /// database has renewed the lease.
    func reading() -> C.Instant { clock.now }

    mutating func renew(from reading: C.Instant) { renewed = reading }
}
