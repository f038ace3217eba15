import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// One LISTEN connection per channel and process, fanned out to in-process waiters.
///
/// A waiter registers *before* it checks the database and waits *after*, so a notification
/// sent in between is not lost: `Signal.wait` returns at once if it was signalled already.
/// When the connection drops (database restarted) every waiter is woken so it re-checks, and
/// the hub reconnects; waiters also bound each wait, so polling covers any missed message.
public final class NotificationHub: Service, Sendable {
    public let channel: String
    let client: PostgresClient
    let logger: Logger
    private let waiters = Mutex<[Int: Registration]>([:])
    private let nextId = Atomic<Int>(0)
    private let connected = Atomic<Bool>(false)

    struct Registration: Sendable {
        let payload: String?
        let signal: Signal
        /// Set for `registerCollecting()`: the payloads received and not yet taken.
        let inbox: Inbox?
    }

    /// Payloads kept for a collecting subscription: distinct, at most `limit` (more are dropped,
    /// so a collector must also find its work without them, as every waiter polls anyway).
    final class Inbox: Sendable {
        static let limit = 10_000
        let payloads = Mutex<Set<String>>([])
    }

    /// What a waiter's timeout is measured on (a test's own clock, so no test waits for time).
    let clock: any Clock<Duration>

    public init(client: PostgresClient, channel: String, logger: Logger, clock: any Clock<Duration> = ContinuousClock()) {
        self.client = client
        self.channel = channel
        self.logger = logger
        self.clock = clock
    }

    /// True while the LISTEN connection is up.
    public var isListening: Bool { connected.load(ordering: .relaxed) }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await self.client.withConnection { connection in
                        try await connection.listen(on: self.channel) { notifications in
                            self.connected.store(true, ordering: .relaxed)
                            self.broadcast(nil)  // anything sent while disconnected: re-check
                            for try await notification in notifications {
                                self.broadcast(notification.payload)
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    self.logger.warning(
                        "LISTEN connection lost; reconnecting", metadata: ["channel": "\(self.channel)", "error": "\(error)"])
                }
                self.connected.store(false, ordering: .relaxed)
                self.broadcast(nil)
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// A signal raised by the next notification with this payload (any payload if nil).
    public func register(payload: String? = nil) -> Subscription {
        register(Registration(payload: payload, signal: Signal(), inbox: nil))
    }

    /// A signal raised by every notification, which also keeps their non-empty payloads for
    /// `Subscription.take()`.
    public func registerCollecting() -> Subscription {
        register(Registration(payload: nil, signal: Signal(), inbox: Inbox()))
    }

    private func register(_ registration: Registration) -> Subscription {
        let id = nextId.wrappingAdd(1, ordering: .relaxed).oldValue
        waiters.withLock { $0[id] = registration }
        return Subscription(hub: self, id: id, signal: registration.signal, inbox: registration.inbox)
    }

    fileprivate func unregister(_ id: Int) {
        _ = waiters.withLock { $0.removeValue(forKey: id) }
    }

    /// Wakes the waiters of `payload`; nil wakes everyone.
    func broadcast(_ payload: String?) {
        let woken = waiters.withLock { waiters in
            waiters.values.filter { payload == nil || $0.payload == nil || $0.payload == payload }
        }
        for registration in woken {
            if let inbox = registration.inbox, let payload, !payload.isEmpty {
                inbox.payloads.withLock { if $0.count < Inbox.limit { $0.insert(payload) } }
            }
            registration.signal.raise()
        }
    }

    public struct Subscription: Sendable {
        let hub: NotificationHub
        let id: Int
        let signal: Signal
        let inbox: Inbox?

        /// The payloads received since the last call (a collecting subscription's; otherwise none).
        public func take() -> Set<String> {
            inbox?.payloads.withLock { payloads in
                defer { payloads = [] }
                return payloads
            } ?? []
        }

        /// Waits for the notification, at most `timeout` on the hub's clock; true if it came. Consumes it, so the
        /// next call waits for the next one.
        @discardableResult
        public func wait(timeout: Duration) async -> Bool {
            await signal.wait(timeout: timeout, clock: hub.clock)
        }

        public func cancel() { hub.unregister(id) }
    }
}

/// A level-triggered flag with an async wait bounded by a timeout.
package final class Signal: Sendable {
    private struct State {
        var raised = false
        var waiter: CheckedContinuation<Bool, Never>?
        var generation = 0
    }
    private let state = Mutex<State>(State())

    package init() {}

    package func raise() {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.raised = true
            return nil
        }
        waiter?.resume(returning: true)
    }

    /// True if raised (now or before the wait), false after `timeout` or on cancellation.
    package func wait(timeout: Duration) async -> Bool {
        await wait(timeout: timeout, clock: ContinuousClock())
    }

    /// The same, the timeout measured on `clock`.
    package func wait<C: Clock>(timeout: C.Duration, clock: C) async -> Bool {
        await withTaskGroup(of: Void.self) { group in
            let generation = nextGeneration()
            group.addTask {
                try? await clock.sleep(for: timeout)
                self.expire(generation)
            }
            let result = await waiting(generation)
            group.cancelAll()
            return result
        }
    }

    /// True if raised (now or before the wait), false on cancellation. No timer (a wait with a
    /// timeout costs a sleeping child task): for waiters that something else wakes in time.
    package func wait() async -> Bool {
        await waiting(nextGeneration())
    }

    private func nextGeneration() -> Int {
        state.withLock { state -> Int in
            state.generation += 1
            return state.generation
        }
    }

    /// Parks until raised (true), or until `generation` expires or the task is cancelled (false).
    private func waiting(_ generation: Int) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let ready: Bool? = state.withLock { state in
                    if state.raised {
                        state.raised = false
                        return true
                    }
                    if state.generation != generation { return false }  // expired or cancelled already
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.expire(generation)
        }
    }

    private func expire(_ generation: Int) {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            guard state.generation == generation else { return nil }
            state.generation += 1  // a later raise stays for the next wait
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: false)
    }
}
