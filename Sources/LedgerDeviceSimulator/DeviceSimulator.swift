import Crypto
import Foundation
import LedgerDomain

/// A simulated recipient as Messages sees it: one person with several devices. Each device has
/// a master secret; its key for a collaboration is diversified from that secret and the
/// collaboration id. The identity's leaf set is the device keys padded with random keys to a
/// fixed size, so the root hash does not reveal how many devices the person has.
public struct SimulatedPerson: Sendable {
    public let collaborationId: String
    public let deviceKeys: [P256.Signing.PrivateKey]
    /// Positions of the devices' keys among the leaves.
    public let devicePositions: [Int]
    /// All leaves (X9.63 public keys), devices and padding, in tree order.
    public let leaves: [[UInt8]]

    /// - Parameters:
    ///   - masterSecrets: one per device (the same secrets give the same keys for a collaboration).
    ///   - leafCount: the padded size (a power of two, at least 2).
    public init(collaborationId: String, masterSecrets: [SymmetricKey], leafCount: Int = 8) {
        precondition(leafCount >= 2 && leafCount & (leafCount - 1) == 0 && masterSecrets.count <= leafCount)
        self.collaborationId = collaborationId
        let keys = masterSecrets.map { Self.diversifiedKey(master: $0, collaborationId: collaborationId) }
        var leaves = (0..<leafCount).map { _ in [UInt8](P256.Signing.PrivateKey().publicKey.x963Representation) }
        var positions = Array(0..<leafCount).shuffled().prefix(keys.count).map { $0 }
        positions.sort()
        for (key, position) in zip(keys, positions) { leaves[position] = [UInt8](key.publicKey.x963Representation) }
        self.deviceKeys = keys
        self.devicePositions = positions
        self.leaves = leaves
    }

    /// A person with `devices` fresh devices.
    public init(collaborationId: String, devices: Int, leafCount: Int = 8) {
        self.init(
            collaborationId: collaborationId, masterSecrets: (0..<devices).map { _ in SymmetricKey(size: .bits256) },
            leafCount: leafCount)
    }

    /// Per-collaboration key: HKDF-SHA256 of the device secret with the collaboration id,
    /// retried with a counter until it is a valid P-256 scalar.
    public static func diversifiedKey(master: SymmetricKey, collaborationId: String) -> P256.Signing.PrivateKey {
        for counter in 0..<UInt8.max {
            let derived = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: master, salt: Data("participant-ledger/diversify".utf8),
                info: Data(collaborationId.utf8) + Data([counter]), outputByteCount: 32)
            if let key = derived.withUnsafeBytes({ try? P256.Signing.PrivateKey(rawRepresentation: Data($0)) }) { return key }
        }
        preconditionFailure("no valid scalar derived")
    }

    /// The tree's levels, leaves' hashes first, root last.
    var levels: [[[UInt8]]] {
        var level = leaves.map { Array(SHA256.hash(data: $0)) }
        var all = [level]
        while level.count > 1 {
            level = stride(from: 0, to: level.count, by: 2).map { Array(SHA256.hash(data: level[$0] + level[$0 + 1])) }
            all.append(level)
        }
        return all
    }

    public var rootHash: RootHash { try! RootHash(bytes: levels.last![0]) }

    /// The identity proof a device presents: its key, its index, the sibling path.
    public func proof(device: Int) -> IdentityProof {
        let index = devicePositions[device]
        var path: [[UInt8]] = []
        var i = index
        for level in levels.dropLast() {
            path.append(level[i ^ 1])
            i /= 2
        }
        return IdentityProof(
            publicKey: [UInt8](deviceKeys[device].publicKey.x963Representation), publicKeyIndex: UInt64(index), inclusionHashes: path)
    }

    /// ECDSA P-256/SHA-256 over the exact challenge bytes, DER or raw r||s.
    public func sign(_ challenge: [UInt8], device: Int, der: Bool = true) -> [UInt8] {
        let signature = try! deviceKeys[device].signature(for: challenge)
        return der ? [UInt8](signature.derRepresentation) : [UInt8](signature.rawRepresentation)
    }
}

/// What `SWHighlightCenter.getSignedIdentityProof(for:using:)` hands an app: the device's
/// key, its index among the leaves, the sibling path, and the signature over the challenge.
public struct SignedProof: Sendable, Hashable {
    public var publicKey: Data
    public var publicKeyIndex: Int
    public var inclusionHashes: [Data]
    public var signature: Data
}

extension SimulatedPerson {
    /// The identity's root hash as an app receives it (`SWPerson.Identity.rootHash`).
    public var rootHashData: Data { Data(rootHash.bytes) }

    /// A device's signed identity proof over `challenge`.
    public func signedProof(challenge: Data, device: Int, der: Bool = true) -> SignedProof {
        let proof = proof(device: device)
        return SignedProof(
            publicKey: Data(proof.publicKey), publicKeyIndex: Int(proof.publicKeyIndex),
            inclusionHashes: proof.inclusionHashes.map { Data($0) }, signature: Data(sign(Array(challenge), device: device, der: der)))
    }
}
