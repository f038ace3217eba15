import Foundation
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWire

extension ShardFanOut {
    /// `GET /v1/audit/lookup?collaboration=ID` on shards: the lookup of the collaboration's shard
    /// (its own auth and checks first, under its latest checkpoint), then the top log's entry for
    /// shard k's latest recorded checkpoint covering the answer's revision record (`top`), and the
    /// shard's lookup again under that checkpoint if it gave it under another, so both levels
    /// meet at one shard checkpoint, as an event's evidence does (`evidence`).
    static func lookup(
        _ request: Request, context: LedgerRequestContext, shard: Responder, index: Int,
        top: @Sendable (Int, Int64) async throws -> Evidence.TopLevel
    ) async throws -> Response {
        func shardLookup(_ query: [String: String]) async throws -> IndexLookup {
            try await answer(IndexLookup.self, try await shard(subrequest(request, replacing: query, removing: ["size"]), context))
        }
        var lookup = try await shardLookup([:])
        let level = try await top(index, lookup.record.inclusion.position)
        let recorded = try CanonicalJSON.decode(ShardCheckpointRecorded.self, from: level.entry.data)
        if recorded.size != lookup.record.inclusion.treeSize { lookup = try await shardLookup(["size": String(recorded.size)]) }
        lookup.top = level
        return try lookup.response(from: request, context: context)
    }
}
