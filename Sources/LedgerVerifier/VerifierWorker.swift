import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import Logging
import Metrics
import ServiceLifecycle

/// A verifier worker: decides stored proof requests (those `ledger api` stores) with the proof
/// engine, a group at a time, until shut down. Woken by the requests NOTIFY, it also sweeps
/// every `pollInterval`, so requests stored while no worker listened are decided by whoever
/// sweeps next. Any number of workers may run, in any processes: the engine's commit decides a
/// request once, and a worker whose group another decided first reads again.
public struct VerifierWorker: Service {
    let engine: ProofEngine
    let requests: ProofRequests
    let wake: NotificationHub
    let logger: Logger
    let pollInterval: Duration

    public init(engine: ProofEngine, requests: ProofRequests, wake: NotificationHub, logger: Logger, pollInterval: Duration = .seconds(1)) {
        self.engine = engine
        self.requests = requests
        self.wake = wake
        self.logger = logger
        self.pollInterval = pollInterval
    }

    public func run() async throws {
        let subscription = wake.register()
        defer { subscription.cancel() }
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                // A full group may mean more are waiting: go again at once.
                if await sweep() < engine.settings.maxGroup {
                    await subscription.wait(timeout: pollInterval)
                }
            }
        }
    }

    /// Decides one group of what is pending now; returns how many requests it looked at.
    @discardableResult
    public func sweep() async -> Int {
        let pending: [ProofSubmission]
        do {
            // Bounded like a decision: after a PostgreSQL restart a lease from the pool can wait
            // for good (see `DatabaseWatchdog`), and the worker must go on sweeping.
            let (requests, limit) = (requests, engine.settings.maxGroup)
            pending = try await withDeadline(.seconds(10), "listing pending proof requests") {
                ShardMetrics.gauge("ledger_proof_queue_depth", logger).record(try await requests.pendingCount())
                return try await requests.pending(limit: limit)
            }
        } catch {
            if !Task.isCancelled {
                logger.warning("verifier: listing pending requests failed", metadata: ["error": "\(DatabaseFailure.describe(error))"])
            }
            return 0
        }
        guard !pending.isEmpty else { return 0 }
        let results = await engine.decide(pending.map { ProofEngine.Request($0, stored: true) })
        for (submission, result) in zip(pending, results) {
            guard case .failure(let error) = result else { continue }
            // A throttled request is decided (refused); anything else leaves it pending for the next sweep.
            if (error as? DomainError)?.code == .tooManyRejections { continue }
            logger.warning(
                "verifier: deciding a request failed; it stays pending",
                metadata: ["request": "\(submission.requestId)", "error": "\(DatabaseFailure.describe(error))"])
        }
        return pending.count
    }
}
