import Foundation
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerReadModel
import LedgerWire
import NIOCore

/// `GET /v1/audit/access` over every shard: shard after shard, each shard's records in its log
/// order and named by their shard (a position is its shard's). Each shard checks the caller and
/// the filters as on one database. With `collaboration`, only its shard is asked (`shards` holds
/// nil for the others: they hold none of its records).
///
/// The cursor is `k.c`: shard k's own cursor c (empty: from its first record). A page takes what
/// it can from shard k, then goes on to the next shard if room is left, so a page is short only at
/// the end. An export (NDJSON, CSV) walks the same pages.
extension ShardFanOut {
    static func auditAccess(_ request: Request, context: LedgerRequestContext, shards: [Responder?]) async throws -> Response {
        try refuseMinPosition(request)
        let export = try AuditExport.Format(asked: request)
        let (limit, start) = (try Query.limit(request), try Query.cursor(request))
        let page: @Sendable (Int, String?) async throws -> AccessAudit = { limit, cursor in
            try await auditPage(request, context: context, shards: shards, limit: limit, cursor: cursor)
        }
        // The first page before the answer starts: a refusal is still a 4xx, not a cut stream.
        let first = try await page(export == .json ? limit : PageCursors.maxLimit, start)
        guard export != .json else { return try first.response(from: request, context: context) }
        return Response(
            status: .ok, headers: [.contentType: export.contentType],
            body: ResponseBody { writer in try await AuditExport.write(export, first: first, next: page, sharded: true, to: &writer) })
    }

    /// Up to `limit` records from `cursor` on: shard k's page, then the next shards' while room is left.
    static func auditPage(
        _ request: Request, context: LedgerRequestContext, shards: [Responder?], limit: Int, cursor: String?
    ) async throws -> AccessAudit {
        var (shard, inner) = try shardCursor(cursor, shards: shards.count)
        var records: [AccessAudit.Record] = []
        while shard < shards.count && records.count < limit {
            guard let responder = shards[shard] else {
                (shard, inner) = (shard + 1, nil)
                continue
            }
            var query = ["format": "json", "limit": String(limit - records.count)]
            query["cursor"] = inner
            let page = try await answer(AccessAudit.self, try await responder(subrequest(request, replacing: query), context))
            records += page.records.map { record in
                var record = record
                record.shard = shard
                return record
            }
            if let next = page.nextCursor { return AccessAudit(records: records, nextCursor: "\(shard).\(next)") }
            (shard, inner) = (shard + 1, nil)
        }
        return AccessAudit(records: records, nextCursor: shard < shards.count ? "\(shard)." : nil)
    }

    /// A fan-out cursor `k.c`: shard k (written as Swift writes it), and its own cursor c, if any.
    static func shardCursor(_ text: String?, shards: Int) throws -> (shard: Int, inner: String?) {
        guard let text else { return (0, nil) }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let shard = Int(parts[0]), String(shard) == parts[0], (0..<shards).contains(shard) else {
            throw DomainError.invalid("cursor is not a cursor of this list; start again without one", code: .invalidCursor)
        }
        return (shard, parts[1].isEmpty ? nil : String(parts[1]))
    }
}
