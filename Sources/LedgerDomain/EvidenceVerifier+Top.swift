import Foundation
import LedgerWire
import TransparencyLog

extension EvidenceVerifier {
    /// `note`, the checkpoint a proof (of `what`: "evidence", "answer") leads to, opened with
    /// `key`; on shards (`top`), `key` is the deployment's: the top level must hold (`verifyTop`),
    /// and `note` must open with shard k's key (the same key under the shard's origin) and be the
    /// tree the top entry records.
    public static func openCheckpoint(
        _ note: String, top level: Evidence.TopLevel?, key: NoteVerifier, of what: String
    ) throws -> (checkpoint: Checkpoint, top: (recorded: ShardCheckpointRecorded, treeSize: Int64)?) {
        let top = try level.map { try verifyTop($0, key: key) }
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint.open(note, verifier: try top.map { try $0.recorded.key(deployment: key) } ?? key)
        } catch {
            throw Failure("checkpoint: \(error)")
        }
        if let recorded = top?.recorded, !recorded.records(checkpoint) {
            throw Failure("top: the top log's entry records another tree of shard \(recorded.shard) than the \(what)'s checkpoint")
        }
        return (checkpoint, top)
    }

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
        let recorded: ShardCheckpointRecorded
        do {
            recorded = try ShardCheckpointRecorded.entry(
                type: top.entry.type, streamId: top.entry.streamId, data: top.entry.data, deployment: key)
        } catch {
            throw Failure("top entry: \(error)")
        }
        guard recorded.shard == top.shard else {
            throw Failure("top entry: it records shard \(recorded.shard), not shard \(top.shard) the evidence names")
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
        guard let leaf = top.extra, let entry = EventLeaf.event(from: leaf) else { throw Failure("top: its entry is not an event") }
        let recorded: ShardCheckpointRecorded
        do {
            recorded = try ShardCheckpointRecorded.entry(type: entry.type, streamId: entry.streamId, data: entry.data, deployment: key)
        } catch {
            throw Failure("top: its entry: \(error)")
        }
        let shardKey = try recorded.key(deployment: key)
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint.open(proof.checkpoint, verifier: shardKey)
        } catch {
            throw Failure("checkpoint: \(error)")
        }
        guard recorded.records(checkpoint) else {
            throw Failure("top: the top log's entry records another tree of shard \(recorded.shard) than the proof's checkpoint")
        }
        var report = try verify(proof, key: shardKey, policy: nil, openings: openings)
        (report.shard, report.topTreeSize, report.cosigners) = (recorded.shard, topReport.treeSize, topReport.cosigners)
        return report
    }
}
