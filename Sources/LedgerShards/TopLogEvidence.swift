import Foundation
import LedgerDomain
import LedgerLog
import LedgerStore
import LedgerWire
import TransparencyLog

/// The top level of a grant's evidence on shards (SPEC "Writes past one primary"): shard k's
/// latest checkpoint the top log recorded, as the top log's entry, with its inclusion proof in the
/// top log's latest published checkpoint. An event's shard evidence is then given under that
/// recorded checkpoint (`GET /v1/audit/evidence/{position}?size=`), so the two levels join.
public struct TopLogEvidence: Sendable {
    let store: EventStore
    let tree: LogTree
    /// How long to wait for the top log to record a checkpoint covering the event, and to sign
    /// one covering that entry: each follows the shard's checkpoint within about a second.
    let wait: Duration

    public init(store: EventStore, tree: LogTree, wait: Duration = .seconds(5)) {
        (self.store, self.tree, self.wait) = (store, tree, wait)
    }

    /// The top level for an event at `position` of shard `shard`, once the top log covers it.
    public func level(shard: Int, covering position: Int64) async throws -> Evidence.TopLevel {
        let deadline = ContinuousClock.now + wait
        while true {
            if let level = try await attempt(shard: shard, position: position) { return level }
            guard ContinuousClock.now < deadline else {
                throw DomainError(
                    .notCheckpointed,
                    "the top log has not yet recorded and signed a checkpoint of shard \(shard) covering position \(position); retry in a second",
                    retryAfter: 1)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The top log's entry at `position` (the partition map a recorded checkpoint names) with its
    /// inclusion proof under the top log's checkpoint of `size`.
    public func entry(at position: Int64, size: Int64) async throws -> IndexLookup.Entry {
        guard let event = try await store.read(positions: [position]).first else {
            throw DomainError(.internalError, "the top log holds no entry at \(position)")
        }
        let (leafHash, hashes) = try await tree.inclusionProof(position: position, size: size)
        return IndexLookup.Entry(event, size: size, leafHash: leafHash, hashes: hashes)
    }

    func attempt(shard: Int, position: Int64) async throws -> Evidence.TopLevel? {
        let stream = TopLogRecorder.stream(shard)
        guard let state = try await store.streamState(stream), let json = state.state,
            try CanonicalJSON.decode(ShardCheckpointRecorded.self, from: json).size >= position,
            let entry = try await store.readStream(stream, afterVersion: state.version - 1).first,
            let top = try await tree.latestCheckpoint(), top.size >= entry.position
        else { return nil }
        let (leafHash, hashes) = try await tree.inclusionProof(position: entry.position, size: top.size)
        return Evidence.TopLevel(
            shard: shard, entry: Evidence.Event(entry), leaf: Base64.encode(EventLeaf.bytes(entry)),
            inclusion: InclusionProof(position: entry.position, size: top.size, leafHash: leafHash, hashes: hashes),
            checkpoint: top.note)
    }
}
