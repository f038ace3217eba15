import Crypto
import Foundation
import Testing
import TransparencyLog

/// C2SP `tlog-cosignature`, `tlog-policy` and `tlog-witness`'s checks, pure: every refusal.
struct WitnessTests {
    static let log = try! NoteSigner(name: "log.example/ledger")
    static let w1 = try! Cosigner(name: "w1.example")
    static let w2 = try! Cosigner(name: "w2.example")
    static let w3 = try! Cosigner(name: "w3.example")

    static func leaves(_ n: Int) -> [MerkleTree.Hash] { (0..<n).map { MerkleTree.leafHash(Array("e\($0)".utf8)) } }
    static func note(size: Int, cosigners: [Cosigner] = []) throws -> String {
        let text = Checkpoint(origin: log.name, size: Int64(size), rootHash: MerkleTree.root(leafHashes: leaves(size)[...])).text
        return try log.sign(text) + cosigners.map { try $0.cosign(text, time: 1_700_000_000) }.joined()
    }

    @Test func cosignatures() throws {
        let key = Self.w1.verifier
        #expect(try CosignatureVerifier(key.text) == key)
        #expect(try Cosigner(Self.w1.text).verifier == key)
        let expectedID = Array(SHA256.hash(data: Array("w1.example".utf8) + [0x0A, 0x04] + key.publicKey))[0..<4]
        #expect(key.keyID == expectedID.reduce(0) { $0 << 8 | UInt32($1) })
        let note = try Self.note(size: 5, cosigners: [Self.w1])
        let (text, signatures) = try SignedNote.parse(note)
        #expect(try key.time(of: text, in: signatures) == 1_700_000_000)
        #expect(try Self.w2.verifier.time(of: text, in: signatures) == nil)
        // Another text, or the time changed: refused.
        #expect(throws: NoteError.self) { try key.time(of: text + "extension\n", in: signatures) }
        var moved = signatures
        moved[1].bytes[7] ^= 1
        #expect(throws: NoteError.self) { try key.time(of: text, in: moved) }
        for bad in ["", "w1.example+00000000+BA==", key.text.replacingOccurrences(of: "+", with: "-"), Self.log.verifier.text] {
            #expect(throws: NoteError.self) { try CosignatureVerifier(bad) }
        }
    }

    @Test func policies() throws {
        let text = """
            # two of three, or all
            log \(Self.log.verifier.text) https://log.example/
            witness W1 \(Self.w1.verifier.text) http://127.0.0.1:1/
            witness W2 \(Self.w2.verifier.text)
            \twitness W3 \(Self.w3.verifier.text)
            group two 2 W1 W2 W3
            quorum two
            """
        let policy = try WitnessPolicy(text)
        #expect(policy.witnesses.map(\.name) == ["W1", "W2", "W3"] && policy.witnesses[0].url == "http://127.0.0.1:1/")
        #expect(policy.isMet(by: ["W1", "W3"]) && !policy.isMet(by: ["W2"]))
        #expect(try policy.verify(Self.note(size: 9, cosigners: [Self.w1, Self.w3])).cosigners == ["W1", "W3"])
        #expect(throws: NoteError.self) { try policy.verify(Self.note(size: 9, cosigners: [Self.w2])) }
        #expect(try WitnessPolicy("log \(Self.log.verifier.text)\nquorum none").verify(Self.note(size: 3)).checkpoint.size == 3)
        let w = "witness W1 \(Self.w1.verifier.text)\n"
        for bad in [
            "", "quorum W1", w + "quorum W1\nquorum W1", w + "group g 2 W1\nquorum g", w + "group g any W1 W1\nquorum g",
            w + "group g any W2\nquorum g", w + "witness W1 \(Self.w2.verifier.text)\nquorum W1",
            w + "witness W9 \(Self.w1.verifier.text)\nquorum W1",
            w + "group g 0 W1\nquorum g", w + "group g 01 W1\nquorum g", w + "group none any W1\nquorum none", w + "quorum W1 W1",
            "log \(Self.w1.verifier.text)\nquorum none", w + "frobnicate\nquorum W1", "quorum g\ngroup g any W1\n" + w,
        ] {
            #expect(throws: NoteError.self, "\(bad)") { try WitnessPolicy(bad) }
        }
    }

    @Test func addCheckpointChecks() throws {
        let logs = [Self.log.name: [Self.log.verifier]]
        let leaves = Self.leaves(20)
        func root(_ n: Int) -> MerkleTree.Hash { MerkleTree.root(leafHashes: leaves[..<n]) }
        func proof(_ m: Int, _ n: Int) -> [MerkleTree.Hash] {
            MerkleTree.consistencyRanges(from: Int64(m), to: Int64(n)).map {
                MerkleTree.root(leafHashes: leaves[Int($0.lowerBound)..<Int($0.upperBound)])
            }
        }
        func status(_ request: AddCheckpoint, latest: (Int64, MerkleTree.Hash)?) -> Int {
            do {
                _ = try request.check(logs: logs, latest: latest.map { (size: $0.0, root: $0.1) })
                return 200
            } catch let refusal as AddCheckpoint.Refusal { return refusal.status } catch { return -1 }
        }
        let n20 = try Self.note(size: 20)
        #expect(status(AddCheckpoint(oldSize: 0, proof: [], note: n20), latest: nil) == 200)
        #expect(status(AddCheckpoint(oldSize: 7, proof: proof(7, 20), note: n20), latest: (7, root(7))) == 200)
        #expect(status(AddCheckpoint(oldSize: 20, proof: [], note: n20), latest: (20, root(20))) == 200)
        let parsed = try AddCheckpoint(body: AddCheckpoint(oldSize: 7, proof: proof(7, 20), note: n20).body)
        #expect(parsed == AddCheckpoint(oldSize: 7, proof: proof(7, 20), note: n20))
        // 404 unknown origin; 403 no trusted signature or a bad one; 400 old past new; 409 not the latest; 422 proofs.
        let stranger = try NoteSigner(name: "other.example/log")
        #expect(
            status(
                AddCheckpoint(
                    oldSize: 0, proof: [], note: try stranger.sign(Checkpoint(origin: "other.example/log", size: 1, rootHash: root(1)).text)
                ), latest: nil) == 404)
        let impostor = try NoteSigner(name: Self.log.name)
        #expect(
            status(
                AddCheckpoint(
                    oldSize: 0, proof: [], note: try impostor.sign(Checkpoint(origin: Self.log.name, size: 20, rootHash: root(20)).text)),
                latest: nil) == 403)
        #expect(
            status(AddCheckpoint(oldSize: 0, proof: [], note: n20.replacingOccurrences(of: "\n20\n", with: "\n21\n")), latest: nil) == 403)
        #expect(status(AddCheckpoint(oldSize: 21, proof: [], note: n20), latest: (21, root(20))) == 400)
        #expect(status(AddCheckpoint(oldSize: 0, proof: [], note: n20), latest: (7, root(7))) == 409)
        #expect(status(AddCheckpoint(oldSize: 5, proof: proof(5, 20), note: n20), latest: (7, root(7))) == 409)
        #expect(status(AddCheckpoint(oldSize: 7, proof: proof(6, 20), note: n20), latest: (7, root(7))) == 422)
        #expect(status(AddCheckpoint(oldSize: 7, proof: proof(7, 20), note: n20), latest: (7, root(6))) == 422)
        #expect(status(AddCheckpoint(oldSize: 20, proof: [], note: n20), latest: (20, root(19))) == 422)
        #expect(status(AddCheckpoint(oldSize: 0, proof: [root(1)], note: n20), latest: nil) == 422)
        for bad in ["", "old 1\n", "new 1\n\n" + n20, "old 01\n\n" + n20, "old 1\nnot base64\n\n" + n20, "old -1\n\n" + n20] {
            #expect(throws: AddCheckpoint.Refusal.self, "\(bad)") { try AddCheckpoint(body: bad) }
        }
    }
}
