import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One message of the change feed: the event's log position, its type and the event as the
/// history endpoint shows it; on shards, the shard whose log the position is in.
public struct FeedEvent: Sendable, Hashable {
    public var id: Int64
    public var type: String
    public var entry: History.Entry
    /// On shards, the event's shard (nil on one database).
    public var shard: Int?
    /// Where the feed resumes after this event (its SSE `id`): on one database the position, on
    /// shards every shard's position (`p0,p1,…`). Give it to `feed(resumingAfter:)`.
    public var cursor: String
}

extension LedgerClient {
    /// The change feed (`GET /v1/feed`): every event the signed-in account may see, after
    /// position `after` (nil: from now on), then live as they are appended. When the connection
    /// drops (or the server cuts a client that fell behind), it reconnects with the last id it
    /// delivered, so no event is missed or repeated. Ends when the consuming task is cancelled,
    /// or with a `LedgerError` when the server refuses the call (a 4xx).
    public func feed(after: Int64? = nil) -> AsyncThrowingStream<FeedEvent, any Error> {
        feed(resumingAfter: after.map(String.init))
    }

    /// The change feed after `cursor` (a `FeedEvent.cursor`; nil: from now on), as `feed(after:)`:
    /// on shards, a position alone names no place in the feed, and a cursor does.
    public func feed(resumingAfter cursor: String?) -> AsyncThrowingStream<FeedEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var last = cursor
                var failures = 0
                while !Task.isCancelled {
                    do {
                        try await connectFeed(after: last) { event in
                            failures = 0
                            continuation.yield(event)
                        } resumeAt: {
                            last = $0
                        }
                    } catch let error as LedgerError where (400..<500).contains(error.status) {
                        continuation.finish(throwing: error)
                        return
                    } catch {
                        failures += 1
                    }
                    try? await Task.sleep(for: .milliseconds(min(5_000, 100 << min(failures, 6))))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// One connection to the feed, through the client's transport: each event to `deliver` until
    /// the server ends the response or the task is cancelled, and each id to `resumeAt` (an id
    /// alone opens a feed on shards); a refusal thrown as `LedgerError`.
    func connectFeed(after: String?, deliver: (FeedEvent) -> Void, resumeAt: (String) -> Void = { _ in }) async throws {
        var request = URLRequest(url: baseURL.appendingPathComponent("/v1/feed"))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue("Bearer \(try await token())", forHTTPHeaderField: "Authorization")
        if let after { request.setValue(after, forHTTPHeaderField: "Last-Event-ID") }
        request.timeoutInterval = 60  // the server sends a comment every 15 s
        let (status, body) = try await transport.stream(request)
        guard (200..<300).contains(status) else {
            var answer = Data()
            for try await piece in body { answer.append(piece) }
            let detail = try? Self.decoder.decode(ErrorBody.self, from: answer)
            throw LedgerError(
                status: status, code: detail?.error.code ?? "http_\(status)", message: detail?.error.message ?? "feed refused",
                reason: detail?.error.reason)
        }
        var messages = ServerSentEvents()
        for try await piece in body {
            for message in messages.append(piece) {
                if let id = message.id { resumeAt(id) }
                if let event = Self.feedEvent(message) { deliver(event) }
            }
        }
    }

    /// A feed event from an SSE message; nil for a comment or a message that is not one.
    static func feedEvent(_ message: ServerSentEvents.Message) -> FeedEvent? {
        guard let cursor = message.id, let type = message.event,
            let entry = try? decoder.decode(History.Entry.self, from: Data(message.data.utf8))
        else { return nil }
        return FeedEvent(id: entry.position, type: type, entry: entry, shard: entry.shard, cursor: cursor)
    }
}
