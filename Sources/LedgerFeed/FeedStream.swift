import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import ServiceLifecycle
import Synchronization

/// One feed client's loop: it catches up from the log with its own audience until the tail
/// takes it (`FeedTail.subscribe`), then writes what the tail queues for it.
public struct FeedStream {
    let store: EventStore
    let tail: FeedTail
    var audience: FeedAudience
    /// The position of the last event looked at, while catching up.
    var cursor: Int64

    /// A client whose `audience` stands at `cursor` (what it owned and held there).
    public init(store: EventStore, tail: FeedTail, audience: FeedAudience, cursor: Int64) {
        self.store = store
        self.tail = tail
        self.audience = audience
        self.cursor = cursor
    }

    /// Until the client goes away, falls too far behind, or the server shuts down gracefully
    /// (then the response ends, and the client reconnects elsewhere with its Last-Event-ID).
    /// `write` sends a piece of the stream's text to the client.
    public mutating func run(write: (String) async throws -> Void) async throws {
        let stopping = Stopping()
        try await withGracefulShutdownHandler {
            try await loop(write, stopping)
        } onGracefulShutdown: {
            stopping.stop()
        }
    }

    /// Set on graceful shutdown; wakes the live loop's wait.
    final class Stopping: Sendable {
        private let state = Mutex<(stopped: Bool, signal: Signal?)>((false, nil))
        var stopped: Bool { state.withLock { $0.stopped } }
        func stop() {
            state.withLock {
                $0.stopped = true
                return $0.signal
            }?.raise()
        }
        func watch(_ signal: Signal) { state.withLock { $0.signal = signal } }
    }

    /// The stream's first message, a comment naming the position it starts after (a ledger on
    /// shards reads it from each shard's stream: `ShardFeed`).
    public static func startComment(after position: Int64) -> String { ": feed after position \(position)\n\n" }

    /// The position a stream's first message names, if `message` (without its blank line) is that message.
    public static func startPosition(_ message: Substring) -> Int64? {
        let prefix = ": feed after position "
        guard message.hasPrefix(prefix) else { return nil }
        return Int64(message.dropFirst(prefix.count))
    }

    private mutating func loop(_ write: (String) async throws -> Void, _ stopping: Stopping) async throws {
        try await write(Self.startComment(after: cursor))
        var joined: FeedSubscriber?
        while joined == nil {
            if Task.isCancelled || stopping.stopped { return }
            if let subscriber = tail.subscribe(audience, at: cursor) {
                joined = subscriber
            } else {
                let batch = try await store.readAll(after: cursor, limit: 500)
                if batch.isEmpty {
                    try await Task.sleep(for: .milliseconds(50))  // the tail has not read the head yet (starting)
                } else {
                    let disclosure = try await Subjects(store: store).disclosure(for: batch)
                    try await send(batch.map { FeedItem($0, disclosure: disclosure, holds: tail.holds) }, to: write)
                }
            }
        }
        guard let subscriber = joined else { return }
        defer { tail.unsubscribe(subscriber) }
        stopping.watch(subscriber.signal)
        while !Task.isCancelled && !stopping.stopped {
            let (text, overflowed, keepAlive) = subscriber.drain()
            if !text.isEmpty { try await write(text) }
            if overflowed {
                try await write(": closed: this client fell too far behind; reconnect with Last-Event-ID\n\n")
                return
            }
            if text.isEmpty && keepAlive {
                try await write(": keep-alive\n\n")
            } else if text.isEmpty {
                _ = await subscriber.signal.wait()  // raised by new messages, the tail's keep-alive tick, or shutdown
            }
        }
    }

    /// While catching up: the events the audience sees, as one write.
    mutating func send(_ items: [FeedItem], to write: (String) async throws -> Void) async throws {
        var text = ""
        for item in items {
            cursor = item.position
            guard let event = item.event, let collaborationId = item.collaborationId,
                audience.sees(event, in: collaborationId, at: item.recordedAtMicros)
            else { continue }
            text += item.message
        }
        if !text.isEmpty { try await write(text) }
    }
}
