import Foundation
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import NIOCore
import ServiceLifecycle
import Synchronization

/// `GET /v1/feed`: the events the caller may see (`FeedAudience`), as Server-Sent Events, in
/// log order from the position it asks for (`Last-Event-ID`, or `?after=N`; neither: from now
/// on), then live. Each message: `id:` the position, `event:` the type, `data:` the event as
/// the history endpoint shows it, on one line. A comment every 15 s keeps idle connections
/// open. New events come from the process's shared `FeedTail`, which routes each to the clients
/// that see it; a client whose queue outgrows the tail's limit (it reads slower than its events
/// come) is cut off with a last comment saying why (it reconnects with its Last-Event-ID and
/// catches up from the log), never buffered without bound.
struct FeedController {
    let service: CollaborationService
    let store: any EventStore
    let tail: FeedTail
    var keepAlive: Duration = .seconds(15)

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.get("feed", use: feed)
    }

    @Sendable func feed(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let head = try await store.head().position
        let asked: Int64?
        if let lastEventId = request.headers[HTTPField.Name("Last-Event-ID")!] {
            guard let position = Int64(lastEventId), position >= 0 else {
                throw DomainError.invalid("Last-Event-ID must be a log position (a non-negative integer)", code: "invalid_query")
            }
            asked = position
        } else {
            asked = try Query.position(request, "after")
        }
        let after = asked ?? head
        guard after <= head else {
            throw DomainError.invalid("position \(after) is past the log's head (\(head))", code: "invalid_query")
        }
        // What the caller owned and held at `after`, from views that have reached it.
        try await service.waitFor(position: after)
        let audience = try await service.feedAudience(account: caller.account, at: after)
        let (store, tail, keepAlive) = (store, tail, keepAlive)
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                var stream = FeedStream(store: store, tail: tail, audience: audience, cursor: after, keepAlive: keepAlive)
                try await stream.run(&writer)
                try await writer.finish(nil)
            })
    }
}

/// One feed client's loop: it catches up from the log with its own audience until the tail
/// takes it (`FeedTail.subscribe`), then writes what the tail queues for it.
struct FeedStream {
    let store: any EventStore
    let tail: FeedTail
    var audience: FeedAudience
    /// The position of the last event looked at, while catching up.
    var cursor: Int64
    let keepAlive: Duration

    /// Until the client goes away, falls too far behind, or the server shuts down gracefully
    /// (then the response ends, and the client reconnects elsewhere with its Last-Event-ID).
    mutating func run(_ writer: inout any ResponseBodyWriter) async throws {
        let stopping = Stopping()
        try await withGracefulShutdownHandler {
            try await loop(&writer, stopping)
        } onGracefulShutdown: {
            stopping.stop()
        }
    }

    /// Set on graceful shutdown; wakes the live loop's wait.
    final class Stopping: Sendable {
        private let state = Mutex<(stopped: Bool, signal: Signal?)>((false, nil))
        var stopped: Bool { state.withLock { $0.stopped } }
        func stop() { state.withLock { $0.stopped = true; return $0.signal }?.raise() }
        func watch(_ signal: Signal) { state.withLock { $0.signal = signal } }
    }

    private mutating func loop(_ writer: inout any ResponseBodyWriter, _ stopping: Stopping) async throws {
        try await writer.write(ByteBuffer(string: ": feed after position \(cursor)\n\n"))
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
                    try await send(batch.map(FeedItem.init), to: &writer)
                }
            }
        }
        guard let subscriber = joined else { return }
        defer { tail.unsubscribe(subscriber) }
        stopping.watch(subscriber.signal)
        while !Task.isCancelled && !stopping.stopped {
            let (text, overflowed) = subscriber.drain()
            if !text.isEmpty { try await writer.write(ByteBuffer(string: text)) }
            if overflowed {
                try await writer.write(ByteBuffer(string: ": closed: this client fell too far behind; reconnect with Last-Event-ID\n\n"))
                return
            }
            if text.isEmpty, await !subscriber.signal.wait(timeout: keepAlive) {
                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
            }
        }
    }

    /// While catching up: the events the audience sees, as one write.
    mutating func send(_ items: [FeedItem], to writer: inout any ResponseBodyWriter) async throws {
        var text = ""
        for item in items {
            cursor = item.position
            guard let event = item.event, let collaborationId = item.collaborationId, audience.sees(event, in: collaborationId)
            else { continue }
            text += item.message
        }
        if !text.isEmpty { try await writer.write(ByteBuffer(string: text)) }
    }
}

/// An event of the log as the feed sends it: decoded once (by the tail, for every client),
/// with its SSE message ready.
struct FeedItem: Sendable {
    var position: Int64
    /// Nil for an event of another stream than a collaboration's, or one that does not decode.
    var collaborationId: String?
    var event: CollaborationEvent?
    /// `id:`, `event:` and `data:` (the event as the history endpoint shows it, on one line).
    var message: String

    static let encoder = APIJSON.encoder()

    static func collaborationKey(_ id: String) -> String { "c:" + id }
    static func accountKey(_ account: String) -> String { "a:" + account }

    /// Who the tail offers this item to: the subscribers of its collaboration, and those of the
    /// account it starts a collaboration for, grants access to or revokes.
    var keys: [String] {
        guard let collaborationId else { return [] }
        switch event {
        case .started(let started): return [Self.collaborationKey(collaborationId), Self.accountKey(started.owner)]
        case .accessGranted(let granted): return [Self.collaborationKey(collaborationId), Self.accountKey(granted.account)]
        case .accessRevoked(let revoked): return [Self.collaborationKey(collaborationId), Self.accountKey(revoked.account)]
        default: return [Self.collaborationKey(collaborationId)]
        }
    }

    init(_ recorded: RecordedEvent) {
        position = recorded.position
        message = ""
        guard recorded.streamId.hasPrefix(Streams.collaborationPrefix), let event = try? CollaborationEvent(recorded) else { return }
        collaborationId = String(recorded.streamId.dropFirst(Streams.collaborationPrefix.count))
        self.event = event
        let metadata = try? CanonicalJSON.decode(EventMetadata.self, from: recorded.metadata)
        let entry = History.Entry(
            position: recorded.position, version: recorded.version, type: recorded.type, time: recorded.recordedAt,
            actor: metadata?.actor, data: (try? CanonicalJSON.decode(JSONValue.self, from: recorded.data)) ?? .null)
        let json = (try? Self.encoder.encode(entry)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        message = "id: \(recorded.position)\nevent: \(recorded.type)\ndata: \(json)\n\n"
    }
}
