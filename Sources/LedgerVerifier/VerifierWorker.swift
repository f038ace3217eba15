import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import Metrics
import ServiceLifecycle

/// A verifier worker: decides stored proof requests until shut down. Woken by the requests
/// NOTIFY, it also sweeps every `pollInterval`, so requests whose first decider died (or
/// that were stored while no worker listened) are decided by whoever sweeps next. Any
/// number of workers may run, in any processes: SKIP LOCKED keeps them apart.
public struct VerifierWorker: Service {
    let decider: ProofDecider
    let requests: NotificationHub
    let logger: Logger
    let concurrency: Int
    let pollInterval: Duration

    public init(
        decider: ProofDecider, requests: NotificationHub, logger: Logger, concurrency: Int = 8, pollInterval: Duration = .seconds(1)
    ) {
        self.decider = decider
        self.requests = requests
        self.logger = logger
        self.concurrency = concurrency
        self.pollInterval = pollInterval
    }

    public func run() async throws {
        let wake = requests.register()
        defer { wake.cancel() }
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let decided = await sweep()
                // A full batch may mean more are waiting: go again at once.
                if decided < concurrency * 4 {
                    await wake.wait(timeout: pollInterval)
                }
            }
        }
    }

    /// Decides what is pending now; returns how many requests it looked at.
    @discardableResult
    public func sweep() async -> Int {
        let ids: [UUID]
        do {
            // Bounded like a decision: after a PostgreSQL restart a lease from the pool can wait
            // for good (see `DatabaseWatchdog`), and the worker must go on sweeping.
            let (decider, limit) = (decider, concurrency * 4)
            ids = try await withDeadline(.seconds(10), "listing pending proof requests") {
                Gauge(label: "ledger_proof_queue_depth").record(try await decider.pendingCount())
                return try await decider.pending(limit: limit)
            }
        } catch {
            if !Task.isCancelled { logger.warning("verifier: listing pending requests failed", metadata: ["error": "\(error)"]) }
            return 0
        }
        await withTaskGroup(of: Void.self) { group in
            var iterator = ids.makeIterator()
            func next() -> Bool {
                guard let id = iterator.next() else { return false }
                group.addTask {
                    do {
                        _ = try await decider.decide(id)
                    } catch {
                        logger.warning("verifier: deciding a request failed; it stays pending", metadata: [
                            "request": "\(id)", "error": "\(error)",
                        ])
                    }
                }
                return true
            }
            for _ in 0..<concurrency where next() {}
            while await group.next() != nil { _ = next() }
        }
        return ids.count
    }
}
