import Foundation
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerFeed
import LedgerReadModel
import LedgerStore
import LedgerWire

/// `GET /v1/feed`: the events the caller may see (`FeedAudience`), as Server-Sent Events, in
/// log order from the position it asks for (`Last-Event-ID`, or `?after=N`; neither: from now
/// on), then live. Each message: `id:` the position, `event:` the type, `data:` the event as
/// the history endpoint shows it, on one line. A comment every 15 s keeps idle connections
/// open. New events come from the process's shared `FeedTail`, which routes each to the clients
/// that see it; a client whose queue outgrows the tail's limit (it reads slower than its events
/// come) is cut off with a last comment saying why (it reconnects with its Last-Event-ID and
/// catches up from the log), never buffered without bound.
struct FeedController {
    let reads: ReadClient
    let store: EventStore
    let tail: FeedTail

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.get("feed", use: feed)
    }

    @Sendable func feed(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let head = try await store.head().position
        let asked: Int64?
        if let lastEventId = request.headers[.lastEventID] {
            guard let position = Int64(lastEventId), position >= 0 else {
                throw DomainError.invalid("Last-Event-ID must be a log position (a non-negative integer)", code: .invalidQuery)
            }
            asked = position
        } else {
            asked = try Query.position(request, "after")
        }
        let after = asked ?? head
        guard after <= head else {
            throw DomainError.invalid("position \(after) is past the log's head (\(head))", code: .invalidQuery)
        }
        // What the caller owned and held at `after`, from views that have reached it.
        try await reads.waitFor(position: after)
        let subject = try await Subjects(store: store).pseudonym(for: caller.account)
        let audience = try await reads.reads().feedAudience(account: caller.account, subject: subject, at: after)
        let (store, tail) = (store, tail)
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                var stream = FeedStream(store: store, tail: tail, audience: audience, cursor: after)
                try await stream.run { try await writer.write(ByteBuffer(string: $0)) }
                try await writer.finish(nil)
            })
    }
}
