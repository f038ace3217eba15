import Foundation
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWire

extension ShardFanOut {
    /// The top log's entry for shard k's checkpoint covering a position.
    typealias TopLevel = @Sendable (_ shard: Int, _ covering: Int64) async throws -> Evidence.TopLevel
    /// The top log's entry at a position, included under its checkpoint of a size.
    typealias TopEntry = @Sendable (_ position: Int64, _ size: Int64) async throws -> IndexLookup.Entry

    /// `GET /v1/audit/lookup?collaboration=ID` on shards: the collaboration's shard's lookup
    /// through both levels (`shardLookup`).
    static func lookup(
        _ request: Request, context: LedgerRequestContext, shard: Responder, index: Int, top: TopLevel, entry: TopEntry
    ) async throws -> Response {
        try await shardLookup(request, context: context, shard: shard, index: index, top: top, entry: entry)
            .response(from: request, context: context)
    }

    /// `GET /v1/audit/lookup?identity=ROOTHASH` on shards: every shard's lookup of the identity,
    /// each through both levels with its partition map, in shard order (`ShardedIndexLookup`).
    /// A shard that does not answer leaves the answer incomplete: refused (503) naming it.
    static func identityLookup(
        _ request: Request, context: LedgerRequestContext, shards: [Responder], top: TopLevel, entry: TopEntry
    ) async throws -> Response {
        var answers: [IndexLookup] = []
        for (index, shard) in shards.enumerated() {
            answers.append(try await shardLookup(request, context: context, shard: shard, index: index, top: top, entry: entry))
        }
        let identity = request.uri.queryParameters["identity"].map(String.init) ?? ""
        return try ShardedIndexLookup(identity: identity, shards: answers).response(from: request, context: context)
    }

    /// Shard `index`'s lookup (its own auth and checks first, under its latest checkpoint), then
    /// the top log's entry for shard k's latest recorded checkpoint covering the answer's revision
    /// record (`top`), and the shard's lookup again under that checkpoint if it gave it under
    /// another, so both levels meet at one shard checkpoint, as an event's evidence does
    /// (`evidence`); and the partition map that entry names (`map`), included under the same top
    /// checkpoint.
    static func shardLookup(
        _ request: Request, context: LedgerRequestContext, shard: Responder, index: Int, top: TopLevel, entry: TopEntry
    ) async throws -> IndexLookup {
        func ask(_ query: [String: String]) async throws -> IndexLookup {
            try await answer(IndexLookup.self, try await shard(subrequest(request, replacing: query, removing: ["size"]), context))
        }
        var lookup = try await ask([:])
        let level = try await top(index, lookup.record.inclusion.position)
        let recorded = try CanonicalJSON.decode(ShardCheckpointRecorded.self, from: level.entry.data)
        if recorded.size != lookup.record.inclusion.treeSize { lookup = try await ask(["size": String(recorded.size)]) }
        lookup.top = level
        // An entry recorded before maps were names none: the answer then proves no shard, and a
        // verifier refuses it until the top log records the shard's checkpoint again.
        if let map = recorded.map { lookup.map = try await entry(map, level.inclusion.treeSize) }
        return lookup
    }
}

extension ShardedIndexLookup: ResponseEncodable {}
