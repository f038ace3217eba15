import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWire
import NIOCore
import Synchronization

/// `GET /v1/feed` on shards (SPEC "Writes past one primary"): each shard's own feed for the
/// caller, merged into one stream (`FeedMerger`) whose ids are cursors naming a position per shard
/// (`p0,p1,…`). A client resumes with the last id it received as `Last-Event-ID` (or `?after=`),
/// and each shard resumes after its own position: nothing lost, nothing repeated. Without one,
/// every shard's feed starts from now.
///
/// Each shard's answer is had before the merged one starts, so a shard's refusal (a position past
/// its head, say) is the answer, not a cut stream. When one shard's stream ends (shutdown, or a
/// client too slow for that shard's queue), the merged stream ends too, and the client reconnects
/// with its cursor. A shard's stream waits until its piece is written (`Handoff`), so a slow
/// client slows every shard's stream, and each shard cuts it off as on one database, rather than
/// the merge holding its backlog.
enum ShardFeed {
    /// `sources`: the shard each shard was copied from, if one was (`FeedMerger.positions`).
    static func respond(
        _ request: Request, context: LedgerRequestContext, shards: [ShardFanOut.Responder], sources: [Int?]
    ) async throws -> Response {
        let asked = request.headers[.lastEventID] ?? request.uri.queryParameters["after"].map(String.init)
        let positions = try asked.map { cursor in
            guard let positions = FeedMerger.positions(cursor, shards: shards.count, sources: sources) else {
                throw DomainError.invalid(
                    "Last-Event-ID (or after) must be this feed's cursor: \(shards.count) log positions, one a shard, as p0,p1,… (or one from before shards were added)",
                    code: .invalidQuery)
            }
            return positions
        }
        var answers: [Response] = []
        for (index, shard) in shards.enumerated() {
            var head = request.head
            head.path = request.uri.path
            head.headerFields[.lastEventID] = positions.map { String($0[index]) }
            let answer = try await shard(Request(head: head, body: RequestBody(buffer: ByteBuffer())), context)
            guard answer.status == .ok else { return answer }
            answers.append(answer)
        }
        let parts = answers
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                try await merge(parts, into: &writer)
                try await writer.finish(nil)
            })
    }

    /// Writes the shards' streams as one until one of them ends or the client goes away.
    static func merge(_ parts: [Response], into writer: inout any ResponseBodyWriter) async throws {
        let handoff = Handoff()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, part) in parts.enumerated() {
                group.addTask {
                    defer { handoff.end(index) }
                    try? await part.body.write(Handoff.Writer(shard: index, handoff: handoff))
                }
            }
            var merger = FeedMerger(shards: parts.count)
            var pieces = handoff.pieces.makeAsyncIterator()
            var failure: (any Error)?
            while let piece = await pieces.next(), let text = piece.text {
                do {
                    let out = merger.take(piece.shard, text)
                    if !out.isEmpty { try await writer.write(ByteBuffer(string: out)) }
                } catch {
                    failure = error
                    break
                }
                handoff.written(piece.shard)
            }
            // Release every shard's waiting write, and stop their streams.
            handoff.close()
            group.cancelAll()
            if let failure { throw failure }
        }
    }

    /// The shards' pieces to the one writer: a shard's write returns once its piece is written,
    /// or throws once the merge is over (`close`). A shard has one piece waiting at most.
    final class Handoff: Sendable {
        struct Piece: Sendable {
            let shard: Int
            /// nil: the shard's stream ended.
            let text: String?
        }

        let pieces: AsyncStream<Piece>
        private let continuation: AsyncStream<Piece>.Continuation
        /// Closed, and each shard's write waiting for its piece to be written.
        private let state = Mutex<(closed: Bool, waiting: [Int: CheckedContinuation<Void, any Error>])>((false, [:]))

        init() { (pieces, continuation) = AsyncStream.makeStream() }

        func send(_ shard: Int, _ text: String) async throws {
            try await withCheckedThrowingContinuation { (written: CheckedContinuation<Void, any Error>) in
                let sent = state.withLock { state in
                    // A stream finished by a cancelled reader takes nothing: then this write ends too.
                    guard !state.closed, case .enqueued = continuation.yield(Piece(shard: shard, text: text)) else { return false }
                    state.waiting[shard] = written
                    return true
                }
                if !sent { written.resume(throwing: CancellationError()) }
            }
        }

        /// Shard `shard`'s piece is written: its write returns.
        func written(_ shard: Int) { state.withLock { $0.waiting.removeValue(forKey: shard) }?.resume() }

        func end(_ shard: Int) {
            state.withLock { state in
                if !state.closed { continuation.yield(Piece(shard: shard, text: nil)) }
            }
        }

        /// No piece is taken after this, and every waiting write throws.
        func close() {
            let waiting = state.withLock { state in
                state.closed = true
                defer { state.waiting = [:] }
                return Array(state.waiting.values)
            }
            continuation.finish()
            for written in waiting { written.resume(throwing: CancellationError()) }
        }

        /// A shard's response body, written into the handoff.
        struct Writer: ResponseBodyWriter {
            let shard: Int
            let handoff: Handoff

            func write(_ buffer: ByteBuffer) async throws { try await handoff.send(shard, String(buffer: buffer)) }
            func finish(_ trailingHeaders: HTTPFields?) async throws {}
        }
    }
}
