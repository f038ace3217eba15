import Foundation
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWire

/// What the console reads besides the audit, on shards: the collaborations list and the log's
/// status.
extension ShardFanOut {
    /// `GET /v1/collaborations` over every shard: shard after shard (`walk`), each shard's page
    /// newest first as on one database and each entry named by its shard. The cursor is `k.c`, as
    /// the access audit's; `position`, one shard's, is left out, and `minPosition` refused.
    static func collaborations(_ request: Request, context: LedgerRequestContext, shards: [Responder]) async throws -> Response {
        try refuseMinPosition(request)
        let (entries, next) = try await walk(shards: shards, limit: try Query.limit(request), cursor: try Query.cursor(request)) {
            shard, responder, room, inner in
            var query = ["limit": String(room)]
            query["cursor"] = inner
            let page = try await answer(
                CollaborationList.self, try await responder(subrequest(request, replacing: query, removing: ["cursor"]), context))
            let entries = page.collaborations.map { entry in
                var entry = entry
                entry.shard = shard
                return entry
            }
            return (entries, page.nextCursor)
        }
        return try CollaborationList(collaborations: entries, nextCursor: next, position: nil).response(from: request, context: context)
    }

    /// `GET /v1/log/status` on shards: the top log's status with every shard's (`LogStatus.sharded`).
    static func logStatus(_ request: Request, context: LedgerRequestContext, top: Responder, shards: [Responder]) async throws -> Response {
        let whole = try await answer(LogStatus.self, try await top(request, context))
        var parts: [LogStatus] = []
        for shard in shards { parts.append(try await answer(LogStatus.self, try await shard(request, context))) }
        return try LogStatus.sharded(top: whole, parts).response(from: request, context: context)
    }
}
