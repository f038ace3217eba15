import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import ServiceLifecycle
import Synchronization

/// The log's newest events, read once per process and routed to the feed clients
/// (`GET /v1/feed`) that see them: one LISTEN (the process's `ledger_events` hub), one read and
/// one decoding per wake-up, however many clients are connected, and none while no client is:
/// the tail then sleeps, and the first client to join wakes it at its own position. Each live client is a
/// `FeedSubscriber` holding its `FeedAudience`; an event is offered only to the subscribers
/// whose collaborations or account it names, in log order, and what they see is queued for
/// them. The tail keeps the last `capacity` events, so a client catching up from the log joins
/// without a gap; a subscriber whose queue outgrows `queueLimit` is cut off.
public final class FeedTail: Service, Sendable {
    let store: EventStore
    let events: NotificationHub
    let logger: Logger
    let capacity: Int
    let queueLimit: Int
    /// How often every live client is woken to send a keep-alive comment if it is idle: one
    /// timer for all of them, not one per connection.
    let keepAlive: Duration
    /// The least time between two reads of the log's tail while events keep coming
    /// (`LEDGER_FOLLOW_INTERVAL`): one read takes every event since the last.
    let followInterval: Duration
    /// The collaborations whose events this log's feed sends: every one, but on a shard a partition
    /// moved to or from, whose log holds the other shard's past too, which that shard's feed sends
    /// (docs/SCALING.md, "Adding a shard"; commands are routed, so what comes later is its own).
    let holds: @Sendable (String) -> Bool

    struct State {
        /// The newest events, in log order, at most `capacity`.
        var recent: [FeedItem] = []
        /// The position the tail has read up to; nil while it sleeps (no subscriber).
        var head: Int64?
        /// Counts wake-ups, so a read begun before the tail slept and woke again is dropped.
        var generation = 0
        var subscribers: [Int: FeedSubscriber] = [:]
        /// Subscribers by routing key (`FeedItem.keys`), and each subscriber's keys.
        var index: [String: Set<Int>] = [:]
        var keysOf: [Int: Set<String>] = [:]
        var nextId = 0
    }
    let state = Mutex(State())
    /// Raised when a subscriber wakes the sleeping tail.
    let joined = Signal()

    public init(
        store: EventStore, events: NotificationHub, logger: Logger, capacity: Int = 4096, queueLimit: Int = 1 << 20,
        keepAlive: Duration = .seconds(15), followInterval: Duration = NotificationHub.followInterval,
        holds: @escaping @Sendable (String) -> Bool = { _ in true }
    ) {
        self.keepAlive = keepAlive
        self.followInterval = followInterval
        self.holds = holds
        self.store = store
        self.events = events
        self.logger = logger
        self.capacity = capacity
        self.queueLimit = queueLimit
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.tick() }
                group.addTask { await self.follow() }
            }
        }
    }

    /// Every `keepAlive`, wakes every subscriber to send a keep-alive if it is idle.
    func tick() async {
        while (try? await Task.sleep(for: keepAlive)) != nil {
            for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.keepAliveDue() }
        }
    }

    /// Reads the log's new events as they are appended and publishes them, while it has
    /// subscribers.
    func follow() async {
        let wake = events.register(spacing: followInterval)
        defer { wake.cancel() }
        while !Task.isCancelled {
            guard let (from, generation) = state.withLock({ state in state.head.map { ($0, state.generation) } }) else {
                _ = await joined.wait(timeout: .seconds(60))
                continue
            }
            do {
                let batch = try await self.store.readAll(after: from, limit: 1000)
                if let last = batch.last {
                    let disclosure = try await Subjects(store: store).disclosure(for: batch)
                    self.publish(
                        batch.map { FeedItem($0, disclosure: disclosure, holds: holds) }, head: last.position, generation: generation)
                }
                if batch.count == 1000 { continue }
            } catch {
                if Task.isCancelled { break }
                self.logger.warning(
                    "feed: reading the log's tail failed; retrying", metadata: ["error": "\(DatabaseFailure.describe(error))"])
            }
            await wake.wait(timeout: .seconds(1))
        }
    }

    /// Appends the items and offers each to the subscribers it names, in order (unless the tail
    /// slept since the read began).
    func publish(_ items: [FeedItem], head: Int64, generation: Int) {
        let woken = state.withLock { state -> [FeedSubscriber] in
            guard state.generation == generation, state.head != nil else { return [] }
            state.recent.append(contentsOf: items)
            if state.recent.count > capacity { state.recent.removeFirst(state.recent.count - capacity) }
            state.head = head
            var woken: [Int: FeedSubscriber] = [:]
            for item in items {
                var ids = Set<Int>()
                for key in item.keys { ids.formUnion(state.index[key] ?? []) }
                for id in ids {
                    guard let subscriber = state.subscribers[id] else { continue }
                    let (queued, keys) = subscriber.offer(item, limit: queueLimit)
                    if queued { woken[id] = subscriber }
                    if let keys { Self.reindex(id, keys, &state) }
                }
            }
            return Array(woken.values)
        }
        for subscriber in woken { subscriber.signal.raise() }
    }

    /// Joins a client whose audience stands at `cursor`, if the tail holds every event after it
    /// (the ones it holds after the cursor are offered at once), or if it sleeps (it wakes and
    /// reads on from `cursor`); nil when the client must read the log further first.
    func subscribe(_ audience: FeedAudience, at cursor: Int64) -> FeedSubscriber? {
        let (subscriber, woke) = state.withLock { state -> (FeedSubscriber?, Bool) in
            var woke = false
            if let head = state.head {
                if cursor < head {
                    guard let first = state.recent.first, cursor >= first.position - 1 else { return (nil, false) }
                }
            } else {
                (state.head, state.recent, woke) = (cursor, [], true)
                state.generation += 1
            }
            state.nextId += 1
            // A cursor past the tail's head (the client read the log further than the tail has
            // yet) is fine: the subscriber skips what it has seen when the tail reads it.
            let subscriber = FeedSubscriber(id: state.nextId, audience: audience, at: cursor)
            for item in state.recent where item.position > cursor { _ = subscriber.offer(item, limit: queueLimit) }
            state.subscribers[subscriber.id] = subscriber
            Self.reindex(subscriber.id, subscriber.keys, &state)
            return (subscriber, woke)
        }
        if woke { joined.raise() }
        return subscriber
    }

    /// Leaves; the last subscriber to leave puts the tail to sleep.
    func unsubscribe(_ subscriber: FeedSubscriber) {
        state.withLock { state in
            state.subscribers[subscriber.id] = nil
            Self.reindex(subscriber.id, [], &state)
            if state.subscribers.isEmpty { (state.head, state.recent) = (nil, []) }
        }
    }

    /// Files subscriber `id` under exactly `keys`.
    private static func reindex(_ id: Int, _ keys: Set<String>, _ state: inout State) {
        let old = state.keysOf[id] ?? []
        for key in old.subtracting(keys) {
            state.index[key]?.remove(id)
            if state.index[key]?.isEmpty == true { state.index[key] = nil }
        }
        for key in keys.subtracting(old) { state.index[key, default: []].insert(id) }
        state.keysOf[id] = keys.isEmpty ? nil : keys
    }
}
