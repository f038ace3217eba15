import Foundation
import LedgerWire
import TransparencyLog

extension EvidenceVerifier {
    /// The top level of evidence on shards: the top log's checkpoint signed with `key` (the
    /// deployment's), its entry rebuilt from the event it is (a `ShardCheckpointRecorded` of the
    /// stream `shard-k`, k the level's shard) and proved in that checkpoint. What the entry
    /// records (the shard's origin, tree size and root) is what the evidence's own checkpoint
    /// must then be.
    static func verifyTop(_ top: Evidence.TopLevel, key: NoteVerifier) throws -> (recorded: ShardCheckpointRecorded, treeSize: Int64) {
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint.open(top.checkpoint, verifier: key)
        } catch {
            throw Failure("top checkpoint: \(error)")
        }
        let leaf = try leafBytes(top.entry, what: "top entry")
        guard Base64.decode(top.leaf) == leaf else { throw Failure("top leaf: it is not the top entry's canonical bytes (it was altered)") }
        guard top.entry.type == ShardCheckpointRecorded.type, top.entry.streamId == "shard-\(top.shard)" else {
            throw Failure("top entry: it is a \(top.entry.type) of \(top.entry.streamId), not shard \(top.shard)'s recorded checkpoint")
        }
        let recorded: ShardCheckpointRecorded
        do {
            recorded = try CanonicalJSON.decode(ShardCheckpointRecorded.self, from: top.entry.data)
        } catch {
            throw Failure("top entry: its data is not a recorded checkpoint: \(error)")
        }
        guard recorded.shard == top.shard, recorded.origin == ShardCheckpointRecorded.origin(shard: top.shard, top: key.name) else {
            throw Failure("top entry: it records shard \(recorded.shard) of origin \(recorded.origin), not shard \(top.shard) of this log")
        }
        try checkInclusion(top.inclusion, of: leaf, at: top.entry.position, in: checkpoint, what: "top inclusion")
        return (recorded, checkpoint.size)
    }
}
