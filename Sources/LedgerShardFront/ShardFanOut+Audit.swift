import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerReadModel
import LedgerWire
import NIOCore

/// `GET /v1/audit/access` over every shard: shard after shard, each shard's records in its log
/// order and named by their shard (a position is its shard's). Each shard checks the caller and
/// the filters as on one database. With `collaboration`, only its shard is asked (`shards` holds
/// nil for the others: they hold none of its records), and `minPosition` is that shard's; across
/// shards it is refused.
///
/// The cursor is `k.c`: shard k's own cursor c (empty: from its first record). A page takes what
/// it can from shard k, then goes on to the next shard if room is left, so a page is short only at
/// the end. An export (NDJSON, CSV) walks the same pages.
extension ShardFanOut {
    static func auditAccess(_ request: Request, context: LedgerRequestContext, shards: [Responder?]) async throws -> Response {
        // One collaboration's audit reads its shard alone, whose position `minPosition` names.
        if shards.filter({ $0 != nil }).count > 1 { try refuseMinPosition(request) }
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
            body: ResponseBody { writer in try await AuditExport.write(export, first: first, next: page, csv: Self.shardedCSV, to: &writer)
            })
    }

    /// The CSV form names each record's shard.
    static let shardedCSV = AuditExport.CSV(header: AccessAuditText.shardedCSVHeader) { AccessAuditText.csvRows($0, sharded: true) }

    /// Up to `limit` records from `cursor` on: shard k's page, then the next shards' while room is left.
    static func auditPage(
        _ request: Request, context: LedgerRequestContext, shards: [Responder?], limit: Int, cursor: String?
    ) async throws -> AccessAudit {
        let (records, next) = try await walk(shards: shards, limit: limit, cursor: cursor) { shard, responder, room, inner in
            var query = ["format": "json", "limit": String(room)]
            query["cursor"] = inner
            let page = try await answer(
                AccessAudit.self, try await responder(subrequest(request, replacing: query, removing: ["cursor"]), context))
            let records = page.records.map { record in
                var record = record
                record.shard = shard
                return record
            }
            return (records, page.nextCursor)
        }
        return AccessAudit(records: records, nextCursor: next)
    }

    /// A list read shard after shard: up to `limit` items from `cursor` on, shard k's page (asked
    /// with the room left and its own cursor), then the next shards' while room is left, so a page
    /// is short only at the end. Shards that are nil hold nothing of the list. The next cursor is
    /// `k.c`: shard k's own cursor c (empty: from its first item); nil after the last shard.
    static func walk<Item>(
        shards: [Responder?], limit: Int, cursor: String?,
        page: (_ shard: Int, Responder, _ room: Int, _ cursor: String?) async throws -> (items: [Item], next: String?)
    ) async throws -> (items: [Item], next: String?) {
        var (shard, inner) = try shardCursor(cursor, shards: shards.count)
        var items: [Item] = []
        while shard < shards.count && items.count < limit {
            guard let responder = shards[shard] else {
                (shard, inner) = (shard + 1, nil)
                continue
            }
            let part = try await page(shard, responder, limit - items.count, inner)
            items += part.items
            if let next = part.next { return (items, "\(shard).\(next)") }
            (shard, inner) = (shard + 1, nil)
        }
        return (items, shard < shards.count ? "\(shard)." : nil)
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
