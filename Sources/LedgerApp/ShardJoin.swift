import LedgerPostgres
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// A shard joining `ledger serve` (docs/SCALING.md, "Losing a shard"): what one database passes
/// before it serves (its schema migrated and current, its holdings agreeing with the map), done
/// for this shard alone, so a shard down at start, or refused by its records, leaves the others
/// serving. Until it joins, the front refuses its requests (503, `Retry-After`;
/// `ledger_shard_available{shard}` 0) and its services wait (`Services`), its availability probe
/// and watchdog among them: nothing leases from its pool meanwhile, so the pool has no failed
/// connections to back off from when the shard comes (its checks use connections of their own).
/// Once joined it stays joined, and an outage after is its availability's (`DatabaseAvailability`).
///
/// `serve` tries every shard before it listens (`starting`), so that a start with every shard up
/// serves them all at once, as one database does: one whose server refuses is passed over at once;
/// one silent (a hung server, or a machine too loaded to answer) is tried again for up to 60 s.
/// After that a shard that does not answer is tried each second until a new connection answers,
/// and one whose checks fail (a move cut short, its schema behind) again after a pause that grows
/// to 30 s, its reason logged each time.
public final class ShardJoin: Sendable {
    enum State {
        case waiting
        /// A try runs (one at a time: the start's may outlast its bound).
        case joining
        /// Joined, with the shard it was copied from, if it was (`ShardHoldings.source`).
        case joined(source: Int?)
    }

    let index: Int
    /// What a new connection to the shard's server finds now (`LedgerProcess.reach`).
    let reach: @Sendable () async -> Reach
    /// The shard's checks (migrations, schema, holdings); its source, or an error saying why not.
    let check: @Sendable () async throws -> Int?
    let logger: Logger
    private let state = Mutex(State.waiting)

    init(index: Int, reach: @escaping @Sendable () async -> Reach, logger: Logger, check: @escaping @Sendable () async throws -> Int?) {
        var logger = logger
        logger[metadataKey: "shard"] = "\(index)"
        (self.index, self.reach, self.check, self.logger) = (index, reach, check, logger)
    }

    public var isJoined: Bool {
        state.withLock {
            if case .joined = $0 { return true }
            return false
        }
    }

    /// The shard this one was copied from, once joined (nil before, or if it is no copy).
    public var source: Int? {
        state.withLock {
            if case .joined(let source) = $0 { return source }
            return nil
        }
    }

    enum Outcome: Equatable {
        case joined
        /// The server refuses a new connection.
        case unreachable
        /// A new connection stays silent past reach's 5 s (a hung server, or a machine too loaded
        /// to tell), the checks' connections fail, or another try runs.
        case silent
        /// The server answers, and the shard's checks fail (logged, with why).
        case refused
    }

    /// One try: the shard's checks, if its server answers a new connection and no other try runs.
    func attempt() async -> Outcome {
        let running = state.withLock { state -> Outcome? in
            switch state {
            case .joined: return .joined
            case .joining: return .silent
            case .waiting:
                state = .joining
                return nil
            }
        }
        if let running { return running }
        switch await reach() {
        case .answers: break
        case let found:
            state.withLock { $0 = .waiting }
            return found == .silent ? .silent : .unreachable
        }
        do {
            let source = try await check()
            state.withLock { $0 = .joined(source: source) }
            logger.info("shard joined: its requests are served", metadata: ["copiedFrom": "\(source.map(String.init) ?? "none")"])
            return .joined
        } catch {
            state.withLock { $0 = .waiting }
            // Its connections failing just after one answered is the server going, or a machine too
            // loaded to connect in time, not its checks; a try cancelled (the process stopping) is
            // no verdict either.
            let failure = (error as? DatabaseFailure)?.error ?? (error as? PSQLError)
            if failure?.meansDatabaseUnavailable == true || error is CancellationError || Task.isCancelled { return .silent }
            logger.error(
                "shard not joined: its requests are refused with 503 until its checks pass (tried again, at most 30 s apart)",
                metadata: ["error": "\(DatabaseFailure.describe(error))"])
            return .refused
        }
    }

    /// The try `serve` makes before it listens: again while the server is silent (a loaded machine
    /// may take seconds to answer a new connection), until it joins, refuses, fails its checks, or
    /// `patience` runs out. The try under way then goes on, and the shard joins when it ends.
    func starting(patience: Duration) async {
        let until = ContinuousClock.now + patience
        let tries = Task {
            while await attempt() == .silent && ContinuousClock.now < until {
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        _ = try? await withDeadline(patience, "shard \(index)'s checks") { await tries.value }
    }

    /// Tries until the shard joins (true), or graceful shutdown or cancellation (false).
    func joined() async -> Bool {
        var pause = Duration.seconds(2)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let wait: Duration
            switch await attempt() {
            case .joined: return true
            case .unreachable, .silent: wait = .seconds(1)
            case .refused: (wait, pause) = (pause, min(pause * 2, .seconds(30)))
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
        }
        return false
    }

    /// A shard's services, run once it joins: its workers, feed tail and checkpointer need its
    /// schema. A group of their own, so they stop in reverse order when the process does.
    struct Services: Service, CustomStringConvertible {
        let join: ShardJoin
        let services: [any Service]

        var description: String { "shard \(join.index)'s services (\(services.map { String(describing: type(of: $0)) }))" }

        func run() async throws {
            if !join.isJoined {
                // Down until it joins; its availability records the gauge from then on.
                Gauge(label: "ledger_shard_available", dimensions: [("shard", "\(join.index)")]).record(0)
                join.logger.warning(
                    "shard waits to join: its requests are refused with 503 until its database answers and passes its checks")
                guard await join.joined() else { return }
            }
            try await ServiceGroup(configuration: .init(services: services.map { .init(service: $0) }, logger: join.logger)).run()
        }
    }
}
