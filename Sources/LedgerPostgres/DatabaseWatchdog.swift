import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Crash-only recovery for a wedged connection pool.
///
/// After PostgreSQL restarts under load, PostgresNIO 1.33's pool can stop handing out
/// connections: leases wait forever although the server is back (seen in the reliability
/// suite; a database that is merely down fails fast and is not this). A process in that state
/// serves nothing and cannot shut down gracefully, so the watchdog probes `SELECT 1` every
/// `interval`; when `limit` probes in a row hang past `deadline`, it logs why and exits the
/// process with status 75 (EX_TEMPFAIL) for its supervisor (compose `restart:`, systemd
/// `Restart=`) to start it afresh. Every write is acknowledged only after its commit, and every
/// worker's progress is in the database, so a restart loses nothing.
public struct DatabaseWatchdog: Service {
    public static let exitStatus: Int32 = 75

    let client: PostgresClient
    let interval: Duration
    let deadline: Duration
    let limit: Int
    let logger: Logger
    let onWedged: @Sendable () -> Void
    /// Whether the database answers a new connection outside the pool; nil: not asked. When it does
    /// not, hung probes are the database being down, not the pool wedged, and a restart would not
    /// help: on shards it would stop every other shard's service too.
    let reachable: (@Sendable () async -> Bool)?

    public init(
        client: PostgresClient, interval: Duration = .seconds(5), deadline: Duration = .seconds(10), limit: Int = 3,
        logger: Logger, onWedged: @escaping @Sendable () -> Void = { exit(DatabaseWatchdog.exitStatus) },
        reachable: (@Sendable () async -> Bool)? = nil
    ) {
        self.client = client
        self.interval = interval
        self.deadline = deadline
        self.limit = limit
        self.logger = logger
        self.onWedged = onWedged
        self.reachable = reachable
    }

    public func run() async throws {
        var hung = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            switch await probe() {
            case .answered, .failed:
                hung = 0
            case .hung:
                hung += 1
                logger.warning("database probe hung", metadata: ["seconds": "\(deadline.components.seconds)", "inARow": "\(hung)"])
                if hung >= limit, let reachable, await !reachable() {
                    logger.warning("the database is down (a new connection is refused too): not a wedged pool; waiting for it")
                    hung = 0
                } else if hung >= limit, reachable != nil, await recovers() {
                    // Back from an outage, the pool may still be backing off its next attempt.
                    hung = 0
                } else if hung >= limit {
                    logger.critical(
                        "the database connection pool is wedged; exiting for a restart", metadata: ["status": "\(Self.exitStatus)"])
                    onWedged()
                    return
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Whether the pool answers a probe given `limit` times the deadline: after an outage a pool
    /// waits out its backoff before it connects again, which is not a wedge.
    func recovers() async -> Bool {
        let patient = DatabaseWatchdog(client: client, deadline: deadline * limit, logger: logger)
        return await patient.probe() != .hung
    }

    public enum Probe: Sendable { case answered, failed, hung }

    /// `SELECT 1` against a deadline: answered, failed fast (database down: not a wedge), or hung.
    /// The query runs in a task of its own: a hung lease does not hold the probe.
    public func probe() async -> Probe {
        let outcome = Mutex<CheckedContinuation<Probe, Never>?>(nil)
        let resume: @Sendable (Probe) -> Void = { probe in
            outcome.withLock { continuation in
                continuation?.resume(returning: probe)
                continuation = nil
            }
        }
        return await withCheckedContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let (client, logger, deadline) = (client, logger, deadline)
            let query = Task {
                do {
                    // A closed connection fails fast here (`ConnectionClosed`); a lease that never comes hangs.
                    try await client.executeUnlessClosed("SELECT 1", logger: logger)
                    resume(.answered)
                } catch {
                    resume(.failed)
                }
            }
            Task {
                try? await Task.sleep(for: deadline)
                resume(.hung)
                query.cancel()
            }
        }
    }
}
