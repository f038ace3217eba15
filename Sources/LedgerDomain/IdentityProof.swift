import Crypto
import Foundation

/// A recipient device's identity proof: its public key, the key's index among the leaves, and
/// the sibling hashes from the leaf up to the root (the seeds' `SWPersonIdentityProof`).
public struct IdentityProof: Sendable, Hashable {
    public var publicKey: [UInt8]
    public var publicKeyIndex: UInt64
    public var inclusionHashes: [[UInt8]]

    public init(publicKey: [UInt8], publicKeyIndex: UInt64, inclusionHashes: [[UInt8]]) {
        self.publicKey = publicKey
        self.publicKeyIndex = publicKeyIndex
        self.inclusionHashes = inclusionHashes
    }

    /// The input checks of the spec: a 65-byte uncompressed P-256 point (0x04 prefix, on the
    /// curve), 1 to 32 inclusion hashes of 32 bytes, and an index below 2^(number of hashes).
    /// A 64-byte "key" is refused: it could pose as an internal node and shorten the path.
    public func validatedKey() throws -> P256.Signing.PublicKey {
        guard publicKey.count == 65 else {
            throw ProofRejection.invalidKey("public key must be 65 bytes (X9.63 uncompressed), got \(publicKey.count)")
        }
        guard publicKey[0] == 0x04 else {
            throw ProofRejection.invalidKey("public key must be uncompressed (0x04 prefix)")
        }
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey) else {
            throw ProofRejection.invalidKey("public key is not a point on P-256")
        }
        guard (1...32).contains(inclusionHashes.count) else {
            throw ProofRejection.invalidPath("between 1 and 32 inclusion hashes are required, got \(inclusionHashes.count)")
        }
        if let bad = inclusionHashes.firstIndex(where: { $0.count != 32 }) {
            throw ProofRejection.invalidPath("inclusion hash \(bad) must be 32 bytes, got \(inclusionHashes[bad].count)")
        }
        guard publicKeyIndex < (UInt64(1) << UInt64(inclusionHashes.count)) else {
            throw ProofRejection.invalidPath("publicKeyIndex \(publicKeyIndex) is not below 2^\(inclusionHashes.count)")
        }
        return key
    }

    /// The root hash this proof leads to, exactly as the seeds' sample computes it:
    /// `h = SHA256(publicKey)`, then for each inclusion hash `s` in order, `SHA256(h || s)` when
    /// the index is even and `SHA256(s || h)` when odd, halving the index each step.
    public func rootHash() -> [UInt8] {
        var hash = Array(SHA256.hash(data: publicKey))
        var index = publicKeyIndex
        for sibling in inclusionHashes {
            var hasher = SHA256()
            if index % 2 == 0 {
                hasher.update(data: hash)
                hasher.update(data: sibling)
            } else {
                hasher.update(data: sibling)
                hasher.update(data: hash)
            }
            hash = Array(hasher.finalize())
            index /= 2
        }
        return hash
    }

    /// Checks input, signature over the exact challenge bytes, and returns the root hash.
    public func verify(signature: [UInt8], challenge: [UInt8]) throws -> RootHash {
        let key = try validatedKey()
        guard ECDSAVerifier.verify(signature: signature, message: challenge, key: key) else {
            throw ProofRejection.badSignature
        }
        return try RootHash(bytes: rootHash())
    }
}

/// ECDSA P-256 / SHA-256 signature checks over exact message bytes.
public enum ECDSAVerifier {
    /// Accepts strict DER (as `SecKeyCreateSignature` makes them) or raw r||s (64 bytes).
    public static func verify(signature: [UInt8], message: [UInt8], key: P256.Signing.PublicKey) -> Bool {
        var candidates: [P256.Signing.ECDSASignature] = []
        if signature.count == 64, let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature) {
            candidates.append(raw)
        }
        // A 64-byte value could also be a (short) DER signature: try both readings.
        if signature.first == 0x30, let der = try? P256.Signing.ECDSASignature(derRepresentation: signature) {
            candidates.append(der)
        }
        return candidates.contains { key.isValidSignature($0, for: message) }
    }
}
