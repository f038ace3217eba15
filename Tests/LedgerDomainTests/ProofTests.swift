// swift-format-ignore-file: AlwaysUseLowerCamelCase

import Crypto
import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import Testing

func sha(_ parts: [UInt8]...) -> [UInt8] { Array(SHA256.hash(data: parts.flatMap { $0 })) }

@Suite("Identity proofs")
struct ProofTests {
    /// The seeds' figure: 8 leaves, P3 at index 2, path [H4, H7, H11].
    @Test("the seeds' worked example: P3 at index 2 with [H4, H7, H11] gives the root")
    func workedExample() throws {
        let keys = (0..<8).map { _ in [UInt8](P256.Signing.PrivateKey().publicKey.x963Representation) }
        let h = keys.map { sha($0) }  // H1..H8 are leaf hashes of P1..P8 (0-based here)
        let h9 = sha(h[0], h[1])
        let h10 = sha(h[2], h[3])
        let h11 = sha(h[4], h[5])
        let h12 = sha(h[6], h[7])
        let h13 = sha(h9, h10)
        let h14 = sha(h11, h12)
        let root = sha(h13, h14)
        // P3 is keys[2]; its sibling is H4 (keys[3]), then H9 (left of H10), then H14.
        let proof = IdentityProof(publicKey: keys[2], publicKeyIndex: 2, inclusionHashes: [h[3], h9, h14])
        #expect(proof.rootHash() == root)
        // The spec's naming of the same figure: H3 = SHA256(P3); H8 = SHA256(H3 || H4);
        // H10 = SHA256(H7 || H8); root = SHA256(H10 || H11).
        let H3 = sha(keys[2])
        let H4 = h[3]
        let H7 = h9
        let H11 = h14
        let H8 = sha(H3, H4)
        let H10 = sha(H7, H8)
        #expect(sha(H10, H11) == root)
        _ = try proof.validatedKey()
    }

    @Test("simulated devices: every device's proof leads to the person's root, DER and raw signatures verify")
    func simulator() throws {
        let person = SimulatedPerson(collaborationId: "c1", devices: 3, leafCount: 16)
        let challenge = (0..<32).map { _ in UInt8.random(in: 0...255) }
        for device in 0..<3 {
            let proof = person.proof(device: device)
            #expect(proof.inclusionHashes.count == 4)
            #expect(try proof.verify(signature: person.sign(challenge, device: device), challenge: challenge) == person.rootHash)
            #expect(
                try proof.verify(signature: person.sign(challenge, device: device, der: false), challenge: challenge) == person.rootHash)
        }
        // Diversification: the same device secret gives different keys per collaboration.
        let secret = SymmetricKey(size: .bits256)
        let a = SimulatedPerson.diversifiedKey(master: secret, collaborationId: "a")
        let b = SimulatedPerson.diversifiedKey(master: secret, collaborationId: "b")
        #expect(a.publicKey.x963Representation != b.publicKey.x963Representation)
        #expect(SimulatedPerson.diversifiedKey(master: secret, collaborationId: "a").rawRepresentation == a.rawRepresentation)
    }

    @Test("every rejection path of the proof math")
    func rejections() throws {
        let person = SimulatedPerson(collaborationId: "c", devices: 1, leafCount: 8)
        let proof = person.proof(device: 0)
        let challenge = Array("challenge bytes".utf8)
        let signature = person.sign(challenge, device: 0)
        let root = person.rootHash.bytes
        #expect(try proof.verify(signature: signature, challenge: challenge).bytes == root)

        var tampered = proof
        tampered.inclusionHashes[1][0] ^= 1
        #expect(tampered.rootHash() != root, "tampered hash")

        var wrongIndex = proof
        wrongIndex.publicKeyIndex ^= 1
        #expect(wrongIndex.rootHash() != root, "wrong index")

        var truncated = proof
        truncated.inclusionHashes.removeLast()
        #expect(truncated.rootHash() != root, "truncated path")

        var extended = proof
        extended.inclusionHashes.append(Array(repeating: 7, count: 32))
        #expect(extended.rootHash() != root, "extended path")

        var outOfRange = proof
        outOfRange.publicKeyIndex = 8
        #expect(throws: ProofRejection.self) { try outOfRange.validatedKey() }

        var tooLong = proof
        tooLong.inclusionHashes = Array(repeating: Array(repeating: 1, count: 32), count: 33)
        tooLong.publicKeyIndex = 0
        #expect(throws: ProofRejection.self) { try tooLong.validatedKey() }
        var empty = proof
        empty.inclusionHashes = []
        #expect(throws: ProofRejection.self) { try empty.validatedKey() }
        var shortHash = proof
        shortHash.inclusionHashes[0] = Array(repeating: 1, count: 31)
        #expect(throws: ProofRejection.self) { try shortHash.validatedKey() }

        // A 64-byte "key" (two concatenated hashes) could pose as an internal node.
        var sixtyFour = proof
        sixtyFour.publicKey = Array(proof.publicKey.dropFirst())
        #expect(throws: ProofRejection.self) { try sixtyFour.validatedKey() }
        var compressed = proof
        compressed.publicKey = [UInt8](P256.Signing.PrivateKey().publicKey.compressedRepresentation)
        #expect(throws: ProofRejection.self) { try compressed.validatedKey() }
        var offCurve = proof
        offCurve.publicKey[64] ^= 1
        #expect(throws: ProofRejection.self) { try offCurve.validatedKey() }
        var wrongPrefix = proof
        wrongPrefix.publicKey[0] = 0x05
        #expect(throws: ProofRejection.self) { try wrongPrefix.validatedKey() }

        // Signature over other data, and by another key.
        #expect(throws: ProofRejection.badSignature) {
            try proof.verify(signature: person.sign(Array("other".utf8), device: 0), challenge: challenge)
        }
        let stranger = SimulatedPerson(collaborationId: "c", devices: 1)
        #expect(throws: ProofRejection.badSignature) {
            try proof.verify(signature: stranger.sign(challenge, device: 0), challenge: challenge)
        }
        #expect(throws: ProofRejection.badSignature) {
            try proof.verify(signature: Array(signature.dropLast()), challenge: challenge)
        }
    }
}

@Suite("Wycheproof ECDSA P-256/SHA-256")
struct WycheproofTests {
    struct File: Decodable {
        struct Group: Decodable {
            struct Key: Decodable { var uncompressed: String }
            struct Case: Decodable {
                var tcId: Int
                var msg: String
                var sig: String
                var result: String
            }
            var key: Key?
            var publicKey: Key?
            var tests: [Case]
        }
        var testGroups: [Group]
    }

    /// Copies of the public vectors, with their licence, in this target's resources.
    static var vectors: URL { Bundle.module.resourceURL!.appendingPathComponent("Vectors") }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test(
        "every valid vector verifies and every invalid one does not",
        arguments: [
            "ecdsa_secp256r1_sha256_test.json", "ecdsa_secp256r1_sha256_p1363_test.json",
        ])
    func vectors(file: String) throws {
        let data = try Data(contentsOf: Self.vectors.appendingPathComponent(file))
        let parsed = try JSONDecoder().decode(File.self, from: data)
        var valid = 0
        var invalid = 0
        for group in parsed.testGroups {
            let keyHex = try #require(group.publicKey?.uncompressed ?? group.key?.uncompressed)
            let key = try P256.Signing.PublicKey(x963Representation: Self.hex(keyHex))
            for test in group.tests {
                let ok = ECDSAVerifier.verify(signature: Self.hex(test.sig), message: Self.hex(test.msg), key: key)
                switch test.result {
                case "valid":
                    #expect(ok, "tcId \(test.tcId) is valid but did not verify")
                    valid += 1
                case "invalid":
                    #expect(!ok, "tcId \(test.tcId) is invalid but verified")
                    invalid += 1
                default:
                    break
                }
            }
        }
        #expect(valid > 50 && invalid > 50)
    }
}
