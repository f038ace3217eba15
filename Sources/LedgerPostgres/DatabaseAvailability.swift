import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Whether a pool's database answers now: `SELECT 1` every `interval` against `deadline`
/// (`DatabaseWatchdog.probe`). On shards, the router asks it before it sends a request to a
/// shard, so a shard whose PostgreSQL is down is refused at once (503, `Retry-After`) while the
/// others serve. Without it such a request waits: PostgresNIO's pool queues leases while it
/// cannot connect, for up to a minute before its circuit breaker fails them. Metrics:
/// `ledger_shard_available{shard}`, 1 or 0.
public final class DatabaseAvailability: Service, Sendable {
    let prober: DatabaseWatchdog
    let interval: Duration
    let logger: Logger
    let gauge: Gauge
    private let answers = Atomic<Bool>(true)

    public init(
        client: PostgresClient, shard: Int, interval: Duration = .seconds(1), deadline: Duration = .seconds(2), logger: Logger
    ) {
        self.prober = DatabaseWatchdog(client: client, deadline: deadline, logger: logger)
        self.interval = interval
        self.logger = logger
        self.gauge = Gauge(label: "ledger_shard_available", dimensions: [("shard", "\(shard)")])
    }

    /// The last probe's answer (true until the first probe says otherwise).
    public var isAvailable: Bool { answers.load(ordering: .relaxed) }

    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let answered = await prober.probe() == .answered
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
