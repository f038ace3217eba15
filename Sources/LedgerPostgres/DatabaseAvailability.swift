import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Whether a pool's database answers now: `SELECT 1` every `interval` against `deadline`
/// (`DatabaseWatchdog.probe`). On shards, the router asks it before it sends a request to a
/// shard, so a shard whose PostgreSQL is down is refused at once (503, `Retry-After`) while the
/// others serve. Without it such a request waits: PostgresNIO's pool queues leases while it
/// cannot connect, for up to a minute before its circuit breaker fails them. `misses` probes in a
/// row must fail before it says no, so a pool merely busy for a moment (a lease waiting past the
/// deadline) does not turn a load peak into refusals; one answer says yes again. A probe that
/// hung (its lease never came within the deadline) is no miss where `reachable` finds the server
/// answering a new connection: its pool is busy, the database is up (under a long load peak every
/// lease can stay taken past two probes). Metrics:
/// `ledger_shard_available{shard}`, 1 or 0 (`shard`: the shard's index, or `top` for the top
/// log's database).
public final class DatabaseAvailability: Service, Sendable {
    let prober: DatabaseWatchdog
    let interval: Duration
    let logger: Logger
    let gauge: Gauge
    let misses: Int
    /// Whether the server answers a new connection, outside the pool (nil: a hung probe is a miss).
    let reachable: (@Sendable () async -> Bool)?
    private let answers = Atomic<Bool>(true)

    public init(
        client: PostgresClient, shard: String, interval: Duration = .seconds(1), deadline: Duration = .seconds(2), misses: Int = 2,
        reachable: (@Sendable () async -> Bool)? = nil, logger: Logger
    ) {
        self.prober = DatabaseWatchdog(client: client, deadline: deadline, logger: logger)
        self.reachable = reachable
        self.interval = interval
        self.misses = misses
        self.logger = logger
        self.gauge = Gauge(label: "ledger_shard_available", dimensions: [("shard", shard)])
    }

    /// The last probe's answer (true until the first probe says otherwise).
    public var isAvailable: Bool { answers.load(ordering: .relaxed) }

    public func run() async throws {
        var missed = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            var probe = await prober.probe()
            if probe == .hung, let reachable, await reachable() { probe = .answered }  // busy, not down
            missed = probe == .answered ? 0 : missed + 1
            let answered = missed < misses
            gauge.record(answered ? 1 : 0)
            if answers.exchange(answered, ordering: .relaxed) != answered {
                if answered {
                    logger.info("the database answers again")
                } else {
                    logger.warning("the database does not answer; its requests are refused with 503 until it does")
                }
            }
            try? await Task.sleep(for: interval)
        }
    }
}
