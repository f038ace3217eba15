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

extension EvidenceVerifier {
    /// Two-level evidence as two C2SP tlog-proofs (on shards, `?format=tlog-proof` and
    /// `&level=top`), each verifiable alone by any tlog-proof verifier: `proof`, the event under
    /// its shard's checkpoint, and `top`, that checkpoint's `ShardCheckpointRecorded` entry under
    /// the top log's checkpoint. `top` is checked as `verify(_:key:policy:)` checks any proof,
    /// with `key` (the deployment's) and `policy`'s quorum when given (the witnesses cosign the
    /// top log); its entry must be a recorded checkpoint of stream `shard-k` of this deployment;
    /// `proof`'s checkpoint must open with `key` under shard k's origin and be the tree the entry
    /// records; then `proof` is checked as any proof, with `openings`.
    public static func verify(
        _ proof: TlogProof, top: TlogProof, key: NoteVerifier, policy: WitnessPolicy?, openings: [Evidence.Opening] = []
    ) throws -> Report {
        let topReport: Report
        do {
            topReport = try verify(top, key: key, policy: policy)
        } catch let failure as Failure {
            throw Failure("top: \(failure.description)")
        }
        guard let leaf = top.extra, let entry = EventLeaf.event(from: leaf), entry.type == ShardCheckpointRecorded.type,
            let recorded = try? CanonicalJSON.decode(ShardCheckpointRecorded.self, from: entry.data)
        else { throw Failure("top: its entry is not a shard's recorded checkpoint") }
        guard recorded.shard >= 0, entry.streamId == "shard-\(recorded.shard)",
            recorded.origin == ShardCheckpointRecorded.origin(shard: recorded.shard, top: key.name)
        else {
            throw Failure(
                "top: its entry records shard \(recorded.shard) of \(recorded.origin) in \(entry.streamId), not a shard of this log")
        }
        let shardKey = try NoteVerifier(name: recorded.origin, publicKey: key.publicKey)
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint.open(proof.checkpoint, verifier: shardKey)
        } catch {
            throw Failure("checkpoint: \(error)")
        }
        guard checkpoint.size == recorded.size, Base64.encode(checkpoint.rootHash) == recorded.rootHash else {
            throw Failure("top: the top log's entry records another tree of shard \(recorded.shard) than the proof's checkpoint")
        }
        var report = try verify(proof, key: shardKey, policy: nil, openings: openings)
        (report.shard, report.topTreeSize, report.cosigners) = (recorded.shard, topReport.treeSize, topReport.cosigners)
        return report
    }
}
