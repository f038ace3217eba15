import Foundation
import LedgerDomain
import TransparencyLog

/// What `verifyShardLogs` found of one shard's log.
public struct ShardLogCheck: Sendable, Equatable {
    public var shard: Int
    /// The shard's checkpoints the top log recorded, each extending the one before.
    public var recorded: Int
    /// The size of the latest of them, whose root the shard's tiles give.
    public var recordedSize: Int64
    /// The shard's published checkpoint, which extends the latest recorded one.
    public var publishedSize: Int64
}

// On shards (docs/SCALING.md), the log auditors know is the top log: its entries are the shards'
// signed checkpoints. Checking both levels from tiles alone, trusting only the deployment's key.
extension LedgerClient {
    /// The same client reading shard `shard`'s own log (`/tlog/shard/{k}/`).
    public func shardLog(_ shard: Int) -> LedgerClient {
        var client = self
        client.tlog = "/tlog/shard/\(shard)"
        return client
    }

    /// Checks the shards' logs under the top log's published tree `top` (already verified, as
    /// `verifyPublishedTree` verifies it):
    /// - every entry of `top`, read from the top log's public entry bundles, gives its root;
    /// - each is the partition map (`ShardMapRecorded` of stream `shard-map`, written as
    ///   specified), or a `ShardCheckpointRecorded` of stream `shard-k` naming the last map
    ///   recorded before it, if it names one, and its checkpoint signed with
    ///   `key` under shard k's origin (`ShardCheckpointRecorded.origin`), its size and root the
    ///   checkpoint's;
    /// - each entry at its own position;
    /// - each shard's recorded checkpoints extend one another (consistency proofs from the
    ///   shard's tiles), its tiles give the latest one's root, and its published checkpoint
    ///   extends it, its root from the tiles too.
    /// Throws `LogAuditFailure` naming what does not hold.
    public func verifyShardLogs(top: Checkpoint, key: NoteVerifier) async throws -> [ShardLogCheck] {
        var recorded: [Int: [Checkpoint]] = [:]
        var lastMap: Int64?
        for (offset, leaf) in try await entries(of: top).enumerated() {
            let what = "top log entry \(offset + 1)"
            guard let event = EventLeaf.event(from: leaf), event.position == Int64(offset + 1) else {
                throw LogAuditFailure("\(what) is not the event at its position")
            }
            if event.streamId == ShardMapRecorded.stream {
                do {
                    _ = try ShardMapRecorded.entry(type: event.type, streamId: event.streamId, data: event.data)
                } catch {
                    throw LogAuditFailure("\(what): \(error)")
                }
                lastMap = event.position
                continue
            }
            let entry: ShardCheckpointRecorded
            do {
                entry = try ShardCheckpointRecorded.entry(type: event.type, streamId: event.streamId, data: event.data, deployment: key)
            } catch {
                throw LogAuditFailure("\(what): \(error)")
            }
            let checkpoint: Checkpoint
            do {
                checkpoint = try Checkpoint.open(entry.checkpoint, verifier: entry.key(deployment: key))
            } catch {
                throw LogAuditFailure("\(what): shard \(entry.shard)'s checkpoint does not open with its key: \(error)")
            }
            guard entry.records(checkpoint) else {
                throw LogAuditFailure("\(what): the size and root it records are not its checkpoint's")
            }
            // The map in force: the last one recorded before the entry (moves are made offline,
            // so no entry is recorded between a new map and the entries that name it).
            if let map = entry.map, map != lastMap {
                throw LogAuditFailure(
                    "\(what): it names the partition map at \(map), not the last one recorded before it (\(lastMap.map { "at \($0)" } ?? "none"))"
                )
            }
            recorded[entry.shard, default: []].append(checkpoint)
        }
        // Shards are numbered from 0: every one up to the last the top log names is in it, and the
        // next index serves no log (a shard the top log never recorded has no evidence that verifies).
        let count = (recorded.keys.max() ?? -1) + 1
        if let missing = (0..<count).first(where: { recorded[$0] == nil }) {
            throw LogAuditFailure("the top log records no checkpoint of shard \(missing), though it records shard \(count - 1)'s")
        }
        do {
            _ = try await exchange("GET", "/tlog/shard/\(count)/checkpoint", authenticated: false)
            throw LogAuditFailure("shard \(count) serves a log whose checkpoints the top log never recorded")
        } catch let error as LedgerError where error.status == 404 {
            // No such shard: the top log names them all.
        } catch let error as LedgerError {
            throw LogAuditFailure("could not tell whether a shard \(count) exists: \(error)")
        }
        var checks: [ShardLogCheck] = []
        for (shard, checkpoints) in recorded.sorted(by: { $0.key < $1.key }) {
            let log = shardLog(shard)
            for (earlier, later) in zip(checkpoints, checkpoints.dropFirst()) {
                try await log.checkConsistency(from: earlier, to: later, what: "shard \(shard)'s recorded checkpoints")
            }
            let latest = checkpoints.last!
            let root = latest.size == 0 ? MerkleTree.emptyRoot : try await log.hashes(of: [0..<latest.size], treeSize: latest.size).first
            guard root == latest.rootHash else {
                throw LogAuditFailure("shard \(shard)'s tiles do not give the root the top log recorded at size \(latest.size)")
            }
            let published = try await log.publishedCheckpoint(key: NoteVerifier(name: latest.origin, publicKey: key.publicKey))
            try await log.checkConsistency(from: latest, to: published.checkpoint, what: "shard \(shard)'s published checkpoint")
            let size = published.checkpoint.size
            let publishedRoot = size == 0 ? MerkleTree.emptyRoot : try await log.hashes(of: [0..<size], treeSize: size).first
            guard publishedRoot == published.checkpoint.rootHash else {
                throw LogAuditFailure("shard \(shard)'s tiles do not give its published root of size \(size)")
            }
            checks.append(
                ShardLogCheck(
                    shard: shard, recorded: checkpoints.count, recordedSize: latest.size, publishedSize: published.checkpoint.size))
        }
        return checks
    }

    /// Every entry of the tree `checkpoint` names, from the log's public entry bundles (the top
    /// log's are: they hold signed checkpoints, no personal data), checked against its root.
    func entries(of checkpoint: Checkpoint) async throws -> [[UInt8]] {
        var entries: [[UInt8]] = []
        var index: Int64 = 0
        while index * 256 < checkpoint.size {
            let width = Tile.width(level: nil, index: index, treeSize: checkpoint.size)
            let bytes = try await tile(Tile(level: nil, index: index, width: width), publicEntries: true)
            guard let bundle = Tile.entries(ofBundle: bytes), bundle.count == width
            else { throw LogAuditFailure("entry bundle \(index) does not hold \(width) entries") }
            entries += bundle
            index += 1
        }
        guard MerkleTree.root(leafHashes: entries.map(MerkleTree.leafHash)[...]) == checkpoint.rootHash else {
            throw LogAuditFailure("the entry bundles do not give the root of size \(checkpoint.size): they were rewritten")
        }
        return entries
    }

    /// `later` extends `earlier`: same origin, no smaller, and a consistency proof from tiles.
    func checkConsistency(from earlier: Checkpoint, to later: Checkpoint, what: String) async throws {
        guard later.size >= earlier.size else {
            throw LogAuditFailure("\(what): a tree of \(later.size) after one of \(earlier.size): the log was truncated")
        }
        guard earlier.size > 0 else {  // every tree extends the empty one, whose root is the empty tree's
            guard earlier.rootHash == MerkleTree.emptyRoot else {
                throw LogAuditFailure("\(what): a tree of size 0 whose root is not the empty tree's")
            }
            return
        }
        let proof = try await hashes(of: MerkleTree.consistencyRanges(from: earlier.size, to: later.size), treeSize: later.size)
        do {
            try MerkleProof.verifyConsistency(
                size1: earlier.size, size2: later.size, root1: earlier.rootHash, root2: later.rootHash, proof: proof)
        } catch {
            throw LogAuditFailure("\(what): the tree of \(later.size) does not extend the one of \(earlier.size): \(error)")
        }
    }
}
