import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import ServiceLifecycle
import Synchronization

/// The log's newest events, read once per process and shared by every feed client
/// (`GET /v1/feed`): one LISTEN (the process's `ledger_events` hub), one read and one decoding
/// per wake-up, however many clients are connected (each client only asks its audience whether
/// it sees an item). It keeps the last `capacity` events; a client further behind reads the
/// log itself until it reaches them.
public final class FeedTail: Service, Sendable {
    let store: any EventStore
    let events: NotificationHub
    let logger: Logger
    let capacity: Int

    fileprivate struct State {
        /// The newest events, in log order, at most `capacity`.
        var recent: [FeedItem] = []
        /// The position the tail has read up to; nil until it has read the head.
        var head: Int64?
        var waiters: [Int: Signal] = [:]
        var nextWaiter = 0
    }
    fileprivate let state = Mutex(State())

    public init(store: any EventStore, events: NotificationHub, logger: Logger, capacity: Int = 4096) {
        self.store = store
        self.events = events
        self.logger = logger
        self.capacity = capacity
    }

    public func run() async throws {
        let wake = events.register()
        defer { wake.cancel() }
        try await cancelWhenGracefulShutdown {
            var head: Int64?
            while !Task.isCancelled {
                do {
                    guard let from = head else {
                        head = try await self.store.head().position
                        self.publish([], head: head!)
                        continue
                    }
                    let batch = try await self.store.readAll(after: from, limit: 1000)
                    if let last = batch.last {
                        head = last.position
                        self.publish(batch, head: last.position)
                    }
                    if batch.count == 1000 { continue }
                } catch {
                    if Task.isCancelled { break }
                    self.logger.warning("feed: reading the log's tail failed; retrying", metadata: ["error": "\(error)"])
                }
                await wake.wait(timeout: .seconds(1))
            }
        }
    }

    private func publish(_ batch: [RecordedEvent], head: Int64) {
        let items = batch.map(FeedItem.init)
        let woken = state.withLock { state -> [Signal] in
            state.recent.append(contentsOf: items)
            if state.recent.count > capacity { state.recent.removeFirst(state.recent.count - capacity) }
            state.head = head
            return Array(state.waiters.values)
        }
        for signal in woken { signal.raise() }
    }

    enum Read: Sendable {
        /// The events after the position (none: the client is up to date).
        case events([FeedItem])
        /// The position is older than the events the tail holds (or the tail has not started):
        /// read the log.
        case behind
    }

    func read(after position: Int64) -> Read {
        state.withLock { state in
            guard let head = state.head else { return .behind }
            if position >= head { return .events([]) }
            guard let first = state.recent.first, position >= first.position - 1 else { return .behind }
            let start = state.recent.firstIndex { $0.position > position } ?? state.recent.endIndex
            return .events(Array(state.recent[start...]))
        }
    }

    /// A client's wake-up: raised each time the tail reads more. Register before reading, so
    /// that what the tail reads in between raises it (the signal is level-triggered).
    public struct Waiter: Sendable {
        let tail: FeedTail
        let id: Int
        let signal: Signal

        /// True if the tail read more since the last wait, false after `timeout`.
        public func wait(timeout: Duration) async -> Bool { await signal.wait(timeout: timeout) }
        public func cancel() { _ = tail.state.withLock { $0.waiters.removeValue(forKey: id) } }
    }

    public func waiter() -> Waiter {
        let signal = Signal()
        let id = state.withLock { state in
            state.nextWaiter += 1
            state.waiters[state.nextWaiter] = signal
            return state.nextWaiter
        }
        return Waiter(tail: self, id: id, signal: signal)
    }
}
