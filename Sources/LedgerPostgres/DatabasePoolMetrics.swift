import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle

/// Database pool use for `/metrics`, as PostgreSQL sees it: this process's connections (its
/// client's `application_name`, in the client's database: a shard's, on a server that may hold
/// several) by state, sampled every few seconds, next to the pool's size.
///
/// `ledger_db_connections{state="active"}` counts connections running a statement (the
/// sampler's own query among them), `idle_in_transaction` those holding a transaction open,
/// `idle` those parked in the pool; `ledger_db_connections_max` is the configured ceiling.
/// PostgresNIO keeps its pool's counters to itself, so the server's view is the one we have;
/// it is also the one that matters when connections run short on the server.
public struct DatabasePoolMetrics: Service {
    let client: PostgresClient
    let applicationName: String
    let maxConnections: Int
    let interval: Duration
    let logger: Logger

    static let states = ["active", "idle", "idle_in_transaction"]

    public init(client: PostgresClient, applicationName: String, maxConnections: Int, interval: Duration = .seconds(5), logger: Logger) {
        self.client = client
        self.applicationName = applicationName
        self.maxConnections = maxConnections
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        ShardMetrics.gauge("ledger_db_connections_max", logger).record(maxConnections)
        let gauges = Dictionary(
            uniqueKeysWithValues: Self.states.map { ($0, ShardMetrics.gauge("ledger_db_connections", logger, [("state", $0)])) })
        let up = ShardMetrics.gauge("ledger_database_up", logger)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                // Bounded: after a restart a lease from the pool can wait for good (see `DatabaseWatchdog`).
                let sampler = self
                let counts = try await withDeadline(.seconds(10), "sampling the pool") { try await sampler.sample() }
                for (state, gauge) in gauges { gauge.record(counts[state] ?? 0) }
                up.record(1)
            } catch {
                up.record(0)
                // The database may be restarting; the next sample tries again.
                logger.debug("pool sample failed", metadata: ["error": "\(DatabaseFailure.describe(error))"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// This process's connections by state (`idle in transaction` as `idle_in_transaction`).
    public func sample() async throws -> [String: Int] {
        try await client.queryUnlessClosed(
            """
            SELECT replace(coalesce(state, 'unknown'), ' ', '_'), count(*)::int8
            FROM pg_stat_activity WHERE application_name = \(applicationName) AND datname = current_database() GROUP BY 1
            """, logger: logger
        ) { rows in
            var counts: [String: Int] = [:]
            for try await (state, count) in rows.decode((String, Int64).self) { counts[state] = Int(count) }
            return counts
        }
    }
}
