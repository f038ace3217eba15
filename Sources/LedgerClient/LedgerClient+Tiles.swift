import Foundation
import LedgerDomain
import TransparencyLog

// Verifying the log from its public tiles (C2SP `tlog-tiles` under /tlog), trusting only the
// keys you hold: the log's verifier key and, if you have one, a witness policy. Hashes come
// from tiles and every proof is computed here, never taken from the server.

/// A published checkpoint that verified: the log's signature, and the policy's quorum of
/// cosignatures when a policy was given.
public struct VerifiedCheckpoint: Sendable, Equatable {
    public var checkpoint: Checkpoint
    public var note: String
    /// The witnesses whose cosignatures verified (empty without a policy).
    public var cosigners: [String]
}

extension LedgerClient {
    /// `GET /tlog/checkpoint`, opened with `key`, and checked against `policy` if given.
    public func publishedCheckpoint(key: NoteVerifier, policy: WitnessPolicy? = nil) async throws -> VerifiedCheckpoint {
        let note = String(decoding: try await exchange("GET", tlog + "/checkpoint", authenticated: false).body, as: UTF8.self)
        if let policy {
            guard policy.logs.contains(key) else { throw LogAuditFailure("the policy does not list the log's key \(key.text)") }
            let (checkpoint, cosigners) = try policy.verify(note)
            return VerifiedCheckpoint(checkpoint: checkpoint, note: note, cosigners: cosigners)
        }
        return VerifiedCheckpoint(checkpoint: try Checkpoint.open(note, verifier: key), note: note, cosigners: [])
    }

    /// One tile's bytes (`GET /tlog/<path>`; entry bundles need an auditor's token unless the
    /// log serves them publicly: `publicEntries`, as the top log on shards does).
    public func tile(_ tile: Tile, publicEntries: Bool = false) async throws -> [UInt8] {
        let data = try await exchange("GET", tlog + "/" + tile.path, authenticated: tile.isEntries && !publicEntries).body
        guard tile.isEntries || data.count == tile.width * 32 else {
            throw LogAuditFailure("\(tile.path) is \(data.count) bytes, not \(tile.width * 32)")
        }
        return Array(data)
    }

    /// The hashes of `ranges` in the tree of `treeSize`, from its tiles (fetched at once).
    public func hashes(of ranges: [Range<Int64>], treeSize: Int64) async throws -> [MerkleTree.Hash] {
        let needed = Tile.needed(for: ranges, treeSize: treeSize)
        let tiles = try await withThrowingTaskGroup(of: (Tile, [UInt8]).self) { group in
            for tile in needed { group.addTask { (tile, try await self.tile(tile)) } }
            return try await group.reduce(into: [Tile: [UInt8]]()) { $0[$1.0] = $1.1 }
        }
        guard let hashes = Tile.hashes(of: ranges, treeSize: treeSize, tiles: tiles) else {
            throw LogAuditFailure("the tiles do not hold the hashes the proof needs")
        }
        return hashes
    }

    /// Checks, from tiles alone, that the published tree's root is the one its tiles give and
    /// that it extends `saved` (a checkpoint you kept): the auditor's routine without database
    /// access. Throws `LogAuditFailure` naming what does not hold.
    public func verifyPublishedTree(extends saved: Checkpoint, key: NoteVerifier, policy: WitnessPolicy? = nil) async throws
        -> VerifiedCheckpoint
    {
        let published = try await publishedCheckpoint(key: key, policy: policy)
        let now = published.checkpoint
        guard now.origin == saved.origin else { throw LogAuditFailure("the published checkpoint is of \(now.origin), not \(saved.origin)") }
        guard now.size >= saved.size else {
            throw LogAuditFailure(
                "the published tree has \(now.size) events, fewer than the saved checkpoint's \(saved.size): the log was truncated")
        }
        guard try await hashes(of: [0..<now.size], treeSize: now.size) == [now.rootHash] else {
            throw LogAuditFailure("the tiles do not give the published root of size \(now.size): the tiles were rewritten")
        }
        let proof = try await hashes(of: MerkleTree.consistencyRanges(from: saved.size, to: now.size), treeSize: now.size)
        do {
            try MerkleProof.verifyConsistency(size1: saved.size, size2: now.size, root1: saved.rootHash, root2: now.rootHash, proof: proof)
        } catch {
            throw LogAuditFailure(
                "the published tree of size \(now.size) does not extend the saved checkpoint of size \(saved.size): the log was rewritten (\(error))"
            )
        }
        return published
    }

    /// Checks that the leaf `leaf` is at `position` in the published tree, from tiles.
    public func verifyInclusion(leaf: [UInt8], position: Int64, key: NoteVerifier, policy: WitnessPolicy? = nil) async throws
        -> VerifiedCheckpoint
    {
        let published = try await publishedCheckpoint(key: key, policy: policy)
        let size = published.checkpoint.size
        guard position >= 1, position <= size else { throw LogAuditFailure("position \(position) is not in the published tree of \(size)") }
        let path = try await hashes(of: MerkleTree.inclusionRanges(leaf: position - 1, size: size), treeSize: size)
        do {
            try MerkleProof.verifyInclusion(
                leafIndex: position - 1, treeSize: size, leafHash: MerkleTree.leafHash(leaf), proof: path,
                root: published.checkpoint.rootHash)
        } catch {
            throw LogAuditFailure("the event at position \(position) is not in the published tree of size \(size): \(error)")
        }
        return published
    }

    /// A device's check of its own grant: the grant's evidence (the leaf, its event and the
    /// device's proof, which must verify), then its inclusion in the published, cosigned tree
    /// computed from tiles.
    public func verifyGrant(position: Int64, key: NoteVerifier, policy: WitnessPolicy? = nil) async throws -> VerifiedCheckpoint {
        let evidence = try await self.evidence(position: position)
        let report = try EvidenceVerifier.verify(evidence, key: key)
        guard report.type == "AccessGranted", report.deviceProofChecked else {
            throw LogAuditFailure("the event at position \(position) is a \(report.type), not a grant")
        }
        guard let leaf = Base64.decode(evidence.leaf) else { throw LogAuditFailure("the evidence's leaf is not base64") }
        return try await verifyInclusion(leaf: leaf, position: position, key: key, policy: policy)
    }
}

public struct LogAuditFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
