import Foundation
import LedgerWire
import TransparencyLog

/// Checks an evidence document offline, trusting nothing but the verifier key (or a witness
/// policy): the checkpoint's signature, the leaf against the event, the inclusion proof against
/// the checkpoint's root, and for a grant the device's proof (its signature over the challenge,
/// and the identity root hash its key and path lead to). Both forms of evidence: the JSON
/// document (`Evidence`) and the C2SP tlog-proof (`TlogProof`), whose entry is the leaf.
public enum EvidenceVerifier {
    public struct Report: Sendable, Equatable {
        public var position: Int64
        public var type: String
        public var treeSize: Int64
        /// True when the event was a grant and its device proof checked.
        public var deviceProofChecked: Bool
        /// Committed values whose plaintext checked against the event's commitment.
        public var openingsChecked: Int = 0
        /// The policy's witnesses whose cosignatures verified (nil when no policy was given).
        public var cosigners: [String]?
        /// On shards: the event's shard, and the size of the top log's checkpoint its shard's checkpoint is proved in.
        public var shard: Int?
        public var topTreeSize: Int64?
    }

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// `key` is the log's key; on shards, the deployment's (the top log's): the shard's key is
    /// the same key under the shard's origin (`ShardCheckpointRecorded.origin`), so no list of
    /// shards or of their keys needs trusting.
    public static func verify(_ evidence: Evidence, key: NoteVerifier) throws -> Report {
        let (checkpoint, top) = try openCheckpoint(evidence.checkpoint, top: evidence.top, key: key, of: "evidence")
        let e = evidence.event
        let leaf = try leafBytes(e, what: "event")
        guard Base64.decode(evidence.leaf) == leaf else {
            throw Failure("leaf: it is not the event's canonical bytes (the event was altered)")
        }
        try checkInclusion(evidence.inclusion, of: leaf, at: e.position, in: checkpoint, what: "inclusion")
        var report = Report(
            position: e.position, type: e.type, treeSize: checkpoint.size,
            deviceProofChecked: try checkContent(type: e.type, data: e.data, openings: evidence.openings ?? []),
            openingsChecked: evidence.openings?.count ?? 0)
        (report.shard, report.topTreeSize) = (top?.recorded.shard, top?.treeSize)
        return report
    }

    /// An event's canonical bytes, rebuilt from the evidence's form of it.
    static func leafBytes(_ e: Evidence.Event, what: String) throws -> [UInt8] {
        guard let eventId = UUID(uuidString: e.eventId) else { throw Failure("\(what): eventId \(e.eventId) is not a UUID") }
        guard let micros = RecordedTime.micros(e.recordedAt) else {
            throw Failure("\(what): recordedAt \(e.recordedAt) is not an RFC 3339 time with six fractional digits")
        }
        return EventLeaf.bytes(
            position: e.position, streamId: e.streamId, version: e.version, eventId: eventId, type: e.type, data: e.data,
            metadata: e.metadata, recordedAtMicros: micros)
    }

    /// `inclusion` proves `leaf`, the entry at `position`, in `checkpoint`'s tree.
    public static func checkInclusion(
        _ inclusion: InclusionProof, of leaf: [UInt8], at position: Int64, in checkpoint: Checkpoint, what: String
    )
        throws
    {
        // `position` first: `position - 1` of a position from a document could overflow.
        guard position >= 1, inclusion.position == position, inclusion.leafIndex == position - 1 else {
            throw Failure("\(what): the proof is for position \(inclusion.position), leaf \(inclusion.leafIndex), not the entry's")
        }
        guard inclusion.treeSize == checkpoint.size else {
            throw Failure("\(what): the proof is for tree size \(inclusion.treeSize) but the checkpoint is of size \(checkpoint.size)")
        }
        let leafHash = MerkleTree.leafHash(leaf)
        guard Base64.decode(inclusion.leafHash) == leafHash else { throw Failure("\(what): leafHash is not the hash of the leaf") }
        let path = try inclusion.hashes.map { text in
            guard let hash = Base64.decode(text) else { throw Failure("\(what): a hash is not standard base64") }
            return hash
        }
        do {
            try MerkleProof.verifyInclusion(
                leafIndex: inclusion.leafIndex, treeSize: checkpoint.size, leafHash: leafHash, proof: path, root: checkpoint.rootHash)
        } catch {
            throw Failure("\(what): \(error)")
        }
    }

    /// Checks a C2SP tlog-proof of an event (`GET /v1/audit/evidence/{position}?format=tlog-proof`)
    /// offline, as `verify(_:key:)` checks the JSON evidence: its checkpoint signed with `key`
    /// and/or by one of `policy`'s logs with the policy's quorum of cosignatures (at least one
    /// of the two is required); the entry (`extra`, the event's leaf bytes) read back into the
    /// event; the index its position − 1; the inclusion proof from the entry's leaf hash to the
    /// checkpoint's root; then, as for the JSON evidence, a grant's device proof and each
    /// opening (from the JSON evidence of the same event: openings are never in the proof).
    public static func verify(
        _ proof: TlogProof, key: NoteVerifier?, policy: WitnessPolicy?, openings: [Evidence.Opening] = []
    ) throws -> Report {
        var opened: Checkpoint?
        var cosigners: [String]?
        do {
            if let key { opened = try Checkpoint.open(proof.checkpoint, verifier: key) }
            if let policy {
                let verified = try policy.verify(proof.checkpoint)
                (opened, cosigners) = (verified.checkpoint, verified.cosigners)
            }
        } catch {
            throw Failure("checkpoint: \(error)")
        }
        guard let checkpoint = opened else { throw Failure("checkpoint: no verifier key and no policy to check it with") }
        guard let leaf = proof.extra else { throw Failure("entry: the proof has no extra line, the event's leaf bytes") }
        guard let e = EventLeaf.event(from: leaf) else { throw Failure("entry: the extra data is not an event's leaf bytes") }
        guard e.position >= 1, proof.index == e.position - 1 else {
            throw Failure("index: the proof is for leaf \(proof.index), but the entry is the event at position \(e.position)")
        }
        do {
            try proof.verifyInclusion(leafHash: MerkleTree.leafHash(leaf), checkpoint: checkpoint)
        } catch {
            throw Failure("inclusion: \(error)")
        }
        return Report(
            position: e.position, type: e.type, treeSize: checkpoint.size,
            deviceProofChecked: try checkContent(type: e.type, data: e.data, openings: openings), openingsChecked: openings.count,
            cosigners: cosigners)
    }

    /// What the event itself proves, once it is known to be in the log: a grant's device proof,
    /// and each opening against the event's commitments. True when a device proof was checked.
    private static func checkContent(type: String, data: String, openings: [Evidence.Opening]) throws -> Bool {
        let isGrant = type == CollaborationEvent.accessGrantedType
        if isGrant { try checkDeviceProof(data) }
        try checkOpenings(openings, data: data, type: type)
        return isGrant
    }

    /// A grant's device proof, as the verifier checked it when it granted.
    public static func checkDeviceProof(_ data: String) throws {
        let grant: CollaborationEvent.AccessGranted
        do {
            grant = try CanonicalJSON.decode(CollaborationEvent.AccessGranted.self, from: data)
        } catch {
            throw Failure("grant: its data is not an AccessGranted event: \(error)")
        }
        guard let challenge = grant.challenge.flatMap(Base64.decode), let signature = grant.signature.flatMap(Base64.decode),
            let hashes = grant.inclusionHashes, let publicKey = Base64.decode(grant.publicKey)
        else { throw Failure("grant: it does not carry the device's proof (recorded before the verifiable log)") }
        let path = try hashes.map { text in
            guard let hash = Base64.decode(text) else { throw Failure("grant: an inclusion hash is not standard base64") }
            return hash
        }
        let proof = IdentityProof(publicKey: publicKey, publicKeyIndex: grant.publicKeyIndex, inclusionHashes: path)
        let root: RootHash
        do {
            root = try proof.verify(signature: signature, challenge: challenge)
        } catch {
            throw Failure("grant: the device's proof does not verify: \(error)")
        }
        guard root == grant.rootHash else {
            throw Failure("grant: the device's key and path lead to \(root.base64), not the granted identity \(grant.rootHash.base64)")
        }
    }

    /// Each opening must open a commitment the event holds: HMAC-SHA256(key: opening, message:
    /// value) is the commitment (SPEC "Personal data and erasure").
    public static func checkOpenings(_ openings: [Evidence.Opening], data: String, type: String) throws {
        let event = RecordedEvent(
            position: 0, streamId: "", version: 0, eventId: UUID(), type: type, data: data, metadata: "{}", recordedAtMicros: 0, hash: [])
        let held = Disclosure.references([event]).commitments
        for opening in openings {
            guard held.contains(opening.commitment) else {
                throw Failure("openings: \(opening.commitment) is not a commitment of the event")
            }
            guard let key = Base64.decode(opening.opening), key.count == 32,
                PersonalData.Commitment.opens(opening.commitment, value: opening.value, opening: key)
            else {
                throw Failure("openings: the value given for \(opening.commitment) does not open it (the value or the opening was altered)")
            }
        }
    }
}
