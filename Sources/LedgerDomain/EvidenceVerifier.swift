import Foundation
import LedgerWire
import TransparencyLog

/// Checks an evidence document offline, trusting nothing but the verifier key: the
/// checkpoint's signature, the leaf against the event, the inclusion proof against the
/// checkpoint's root, and for a grant the device's proof (its signature over the challenge,
/// and the identity root hash its key and path lead to).
public enum EvidenceVerifier {
    public struct Report: Sendable, Equatable {
        public var position: Int64
        public var type: String
        public var treeSize: Int64
        /// True when the event was a grant and its device proof checked.
        public var deviceProofChecked: Bool
        /// Committed values whose plaintext checked against the event's commitment.
        public var openingsChecked: Int = 0
    }

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    public static func verify(_ evidence: Evidence, key: NoteVerifier) throws -> Report {
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint.open(evidence.checkpoint, verifier: key)
        } catch {
            throw Failure("checkpoint: \(error)")
        }

        let e = evidence.event
        guard let eventId = UUID(uuidString: e.eventId) else { throw Failure("event: eventId \(e.eventId) is not a UUID") }
        guard let micros = RecordedTime.micros(e.recordedAt) else {
            throw Failure("event: recordedAt \(e.recordedAt) is not an RFC 3339 time with six fractional digits")
        }
        let leaf = EventLeaf.bytes(
            position: e.position, streamId: e.streamId, version: e.version, eventId: eventId, type: e.type, data: e.data,
            metadata: e.metadata, recordedAtMicros: micros)
        guard Base64.decode(evidence.leaf) == leaf else { throw Failure("leaf: it is not the event's canonical bytes (the event was altered)") }

        let inclusion = evidence.inclusion
        guard inclusion.position == e.position, inclusion.leafIndex == e.position - 1 else {
            throw Failure("inclusion: the proof is for position \(inclusion.position), leaf \(inclusion.leafIndex), not the event's")
        }
        guard inclusion.treeSize == checkpoint.size else {
            throw Failure("inclusion: the proof is for tree size \(inclusion.treeSize) but the checkpoint is of size \(checkpoint.size)")
        }
        let leafHash = MerkleTree.leafHash(leaf)
        guard Base64.decode(inclusion.leafHash) == leafHash else { throw Failure("inclusion: leafHash is not the hash of the leaf") }
        let path = try inclusion.hashes.map { text in
            guard let hash = Base64.decode(text) else { throw Failure("inclusion: a hash is not standard base64") }
            return hash
        }
        do {
            try MerkleProof.verifyInclusion(
                leafIndex: inclusion.leafIndex, treeSize: checkpoint.size, leafHash: leafHash, proof: path, root: checkpoint.rootHash)
        } catch {
            throw Failure("inclusion: \(error)")
        }

        var deviceProofChecked = false
        if e.type == CollaborationEvent.accessGrantedType {
            try checkDeviceProof(e.data)
            deviceProofChecked = true
        }
        try checkOpenings(evidence.openings ?? [], data: e.data, type: e.type)
        return Report(
            position: e.position, type: e.type, treeSize: checkpoint.size, deviceProofChecked: deviceProofChecked,
            openingsChecked: evidence.openings?.count ?? 0)
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
            else { throw Failure("openings: the value given for \(opening.commitment) does not open it (the value or the opening was altered)") }
        }
    }
}
