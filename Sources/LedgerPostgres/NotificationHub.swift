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
        /// Set for `register(spacing:)`: when its last wait returned.
        let spaced: Spacing?
    }

    /// A subscription's least time between two returns of `wait`, and when the last one returned.
    final class Spacing: Sendable {
        let interval: Duration
        let last = Mutex<ContinuousClock.Instant?>(nil)

        init(_ interval: Duration) { self.interval = interval }
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
                            self.broadcast(nil)  // anything sent while disconnected: re-check
                            self.connected.store(true, ordering: .relaxed)
                            for try await notification in notifications {
                                self.broadcast(notification.payload)
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    self.logger.warning(
                        "LISTEN connection lost; reconnecting",
                        metadata: ["channel": "\(self.channel)", "error": "\(DatabaseFailure.describe(error))"])
                }
                self.connected.store(false, ordering: .relaxed)
                self.broadcast(nil)
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// A signal raised by the next notification with this payload (any payload if nil).
    public func register(payload: String? = nil) -> Subscription {
        register(Registration(payload: payload, signal: Signal(), inbox: nil, spaced: nil))
    }

    /// The spacing of a worker that follows the log when nothing sets one: `LEDGER_FOLLOW_INTERVAL`'s
    /// default, for the projector, the feed's tail and the webhook deliverer made without a
    /// configuration (the services `ledger serve` runs pass the setting's value).
    public static let followInterval: Duration = .milliseconds(5)

    /// A signal raised by any notification, whose `wait` returns at most once per `spacing`
    /// while notifications keep coming: a notification after a quiet `spacing` returns at once,
    /// later ones wait out the rest of it, and however many came meanwhile, one return answers
    /// them all. For a worker that follows the log, so it takes one step for the events of an
    /// interval under load and one per event only when they are rare (`LEDGER_FOLLOW_INTERVAL`).
    public func register(spacing: Duration) -> Subscription {
        register(Registration(payload: nil, signal: Signal(), inbox: nil, spaced: spacing > .zero ? Spacing(spacing) : nil))
    }

    /// A signal raised by every notification, which also keeps their non-empty payloads for
    /// `Subscription.take()`.
    public func registerCollecting() -> Subscription {
        register(Registration(payload: nil, signal: Signal(), inbox: Inbox(), spaced: nil))
    }

    private func register(_ registration: Registration) -> Subscription {
        let id = nextId.wrappingAdd(1, ordering: .relaxed).oldValue
        waiters.withLock { $0[id] = registration }
        return Subscription(hub: self, id: id, signal: registration.signal, inbox: registration.inbox, spaced: registration.spaced)
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
        let spaced: Spacing?

        /// The payloads received since the last call (a collecting subscription's; otherwise none).
        public func take() -> Set<String> {
            inbox?.payloads.withLock { payloads in
                defer { payloads = [] }
                return payloads
            } ?? []
        }

        /// Waits for the notification, at most `timeout` on the hub's clock; true if it came. Consumes it, so the
        /// next call waits for the next one.
        ///
        /// A spaced subscription's (`register(spacing:)`) notification that came sooner than its
        /// spacing after the last one it returned for first waits out the rest of it (so a wait
        /// can take up to `timeout` plus the spacing), and the notifications that come during
        /// that rest are consumed with it: the caller reads the log after this returns, which
        /// covers them. A timeout is not a wake: the first notification after a quiet spacing
        /// returns at once however recently a wait timed out.
        @discardableResult
        public func wait(timeout: Duration) async -> Bool {
            let came = await signal.wait(timeout: timeout, clock: hub.clock)
            guard let spaced, came else { return came }
            if let last = spaced.last.withLock({ $0 }), ContinuousClock.now < last + spaced.interval {
                try? await Task.sleep(until: last + spaced.interval, clock: .continuous)
                signal.lower()
            }
            spaced.last.withLock { $0 = ContinuousClock.now }
            return came
        }

        public func cancel() { hub.unregister(id) }
    }
}
