import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Whether a pool's database answers now: `SELECT 1` every `interval` against `deadline`
/// (`DatabaseWatchdog.probe`). On shards, the front asks it before and while it sends a request
/// to a shard, so a shard whose database cannot serve is refused at once (503, `Retry-After`)
/// while the others serve. Without it such a request waits: PostgresNIO's pool queues leases
/// while it cannot connect, for up to a minute before its circuit breaker fails them.
///
/// A probe that does not answer within `early` asks `reach` beside it, what a new connection
/// outside the pool finds, and a probe that fails or hangs is judged by it. The
/// server refuses it (any SQLSTATE): down at once, the shard cannot serve. It stays silent: a
/// miss (a hung server, or a machine too loaded to tell: `misses` in a row say down, so a stall
/// of the whole machine does not refuse every shard). It answers: a hung probe is a busy pool,
/// not a miss (under a long load peak every lease can stay taken past two probes), and a failed
/// one is a miss. One answer says up again.
/// Metrics: `ledger_shard_available{shard}`, 1 or 0 (`shard`: the shard's index, or `top` for the
/// top log's database); its log lines name the shard.
public final class DatabaseAvailability: Service, Sendable {
    let prober: DatabaseWatchdog
    let interval: Duration
    let logger: Logger
    let gauge: Gauge
    let misses: Int
    /// What a new connection outside the pool finds (nil: a probe not answered is a miss).
    let reach: (@Sendable () async -> Reach)?
    /// How long a probe may take before `reach` is asked beside it.
    let early: Duration
    private let answers = Atomic<Bool>(true)

    public init(
        client: PostgresClient, shard: String, interval: Duration = .seconds(1), deadline: Duration = .seconds(2), misses: Int = 2,
        reach: (@Sendable () async -> Reach)? = nil, early: Duration = .milliseconds(250), logger: Logger
    ) {
        self.early = early
        var logger = logger
        logger[metadataKey: "shard"] = "\(shard)"
        self.prober = DatabaseWatchdog(client: client, deadline: deadline, logger: logger)
        self.reach = reach
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
            // A probe that has not answered within `early` has its new connection asked at once,
            // alongside (a sound pool answers `SELECT 1` in a millisecond): a shard going down is
            // then seen within about the longer of the two, not their sum.
            let early = reach.map { reach in
                Task { () -> Reach? in
                    try? await Task.sleep(for: self.early)
                    return Task.isCancelled ? nil : await reach()
                }
            }
            let probe = await prober.probe()
            if probe == .answered { early?.cancel() }
            switch probe {
            case .answered:
                missed = 0
            case let probe:
                let found: Reach? = await early?.value ?? nil
                switch found {
                case .refuses?: missed = misses  // the server refuses a working connection: down now
                case .answers? where probe == .hung: break  // busy, not down
                case .answers?, .silent?, nil: missed += 1
                }
            }
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
