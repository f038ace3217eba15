import Foundation
import Testing
import TransparencyLog

/// C2SP `tlog-proof@v1`, pure: the text byte for byte as the specification writes it, every
/// malformed line refused, a proof made by Go's `sumdb/note` and `sumdb/tlog` verified, and
/// every tampering refused by the verification (steps 2 to 4 of the specification).
struct TlogProofTests {
    static let log = try! NoteSigner(name: "log.example/ledger")
    static let w1 = try! Cosigner(name: "w1.example")
    static let w2 = try! Cosigner(name: "w2.example")
    static let w3 = try! Cosigner(name: "w3.example")
    static let entries = (0..<13).map { Array("entry \($0)".utf8) }
    static let policy = try! WitnessPolicy(
        """
        log \(log.verifier.text)
        witness W1 \(w1.verifier.text)
        witness W2 \(w2.verifier.text)
        witness W3 \(w3.verifier.text)
        group two 2 W1 W2 W3
        quorum two
        """)

    /// The proof of entry `index` in the tree of the first `size` entries, its checkpoint signed
    /// by `signer` and cosigned by `cosigners`.
    static func proof(index: Int, size: Int, cosigners: [Cosigner], signer: NoteSigner = log) throws -> TlogProof {
        let leaves = entries.map(MerkleTree.leafHash)
        let text = Checkpoint(origin: signer.name, size: Int64(size), rootHash: MerkleTree.root(leafHashes: leaves[..<size])).text
        let note = try signer.sign(text) + cosigners.map { try $0.cosign(text, time: 1_700_000_000) }.joined()
        let path = MerkleTree.inclusionRanges(leaf: Int64(index), size: Int64(size)).map {
            MerkleTree.root(leafHashes: leaves[Int($0.lowerBound)..<Int($0.upperBound)])
        }
        return TlogProof(extra: entries[index], index: Int64(index), proof: path, checkpoint: note)
    }

    /// Made with Go: `note.Sign` (the log), Ed25519 cosignatures as `tlog-cosignature` says (two
    /// witnesses), `tlog.ProveRecord` for record 6 ("record 6") of 13, written as the spec says.
    static let goProof =
        [
            "c2sp.org/tlog-proof@v1",
            "extra cmVjb3JkIDY=",
            "index 6",
            "RjXudHR7gs33amrwSpQUd7jtTDy87rnDqhg5DocnZYQ=",
            "0hDTO2hjmXA3kPUaINAqwbmrFLkQW1pDSk5J9JNxOGM=",
            "VQcmZi2PEzD1dmUTPcWs3MBK3Q2V32plYgXiT33KphE=",
            "ZExtEJr7CfK0PFtB329R2geuRxrHv42Po8p4OlNz8Uc=",
            "",
            "gen.test/ledger",
            "13",
            "3Zlkg8n85OUZyrWRDS3XE/t2pPZl54trM1L4GUvEgbA=",
            "",
            "— gen.test/ledger BLO80jga8c4+lcLrF1bJF1xfg2rwvqLiWH3F/Ztz1hUXrYyta6JwRo3+dc96YE74chWLqEfc5c6qqjsKmfUFyLINcg8=",
            "— w1.test Vp0jzwAAAABlU/EA8uirmlyQsizyyacoOa+/OaTj4pxYsr2iGYC0ZIJYxaKZxfjxkaUjcsdMJyQms6onU4tBElQzNqAx1t4UIUvdCA==",
            "— w2.test GwgnqAAAAABlU/EAJtQ931Tj3jDoqZ7iaCVsui4hvcE82GSzNWLGJXjH6cR0C4yTK9xua1rTqkUKMbPAc5apHTKbGJmuZCecEahMAw==",
        ].joined(separator: "\n") + "\n"
    static let goPolicy = """
        log gen.test/ledger+04b3bcd2+ARa6ESAdyIoeO2b8VxuLJcuZyxep5HxHnJG0PVUqsfEn
        witness W1 w1.test+569d23cf+BIYnPXIwmD/zFdUj434iVHjjl54D7YoAC2Xz2bdGAtn2
        witness W2 w2.test+1b0827a8+BC1uwlv8YRA6EF7NbiCb8J66ITbA5+XogmL+YkXUjo+y
        group both all W1 W2
        quorum both
        """

    @Test("the text is the specification's: header, extra, index, a hash a line, an empty line, the checkpoint")
    func format() throws {
        let (h1, h2) = (MerkleTree.leafHash([1]), MerkleTree.leafHash([2]))
        let note = try Self.log.sign(Checkpoint(origin: Self.log.name, size: 5, rootHash: h1).text)
        let full = TlogProof(extra: Array("entry".utf8), index: 3, proof: [h1, h2], checkpoint: note)
        #expect(full.text == "c2sp.org/tlog-proof@v1\nextra ZW50cnk=\nindex 3\n\(Base64.encode(h1))\n\(Base64.encode(h2))\n\n" + note)
        let bare = TlogProof(extra: nil, index: 0, proof: [], checkpoint: note)
        #expect(bare.text == "c2sp.org/tlog-proof@v1\nindex 0\n\n" + note)
        let emptyExtra = TlogProof(extra: [], index: 9_223_372_036_854_775_806, proof: [h2], checkpoint: note)
        #expect(emptyExtra.text.hasPrefix("c2sp.org/tlog-proof@v1\nextra \nindex 9223372036854775806\n"))
        for proof in [full, bare, emptyExtra] {
            let parsed = try TlogProof(text: proof.text)
            #expect(parsed == proof)
            #expect(parsed.text == proof.text, "one spelling")
        }
        #expect(try TlogProof(text: emptyExtra.text).extra == [], "an empty extra line is extra data, not none")
    }

    @Test("a proof Go made (sumdb/note, sumdb/tlog) parses, formats back byte for byte and verifies its policy")
    func goMade() throws {
        let proof = try TlogProof(text: Self.goProof)
        #expect(proof.extra == Array("record 6".utf8) && proof.index == 6 && proof.proof.count == 4)
        #expect(proof.text == Self.goProof)
        let (checkpoint, cosigners) = try proof.verify(
            leafHash: MerkleTree.leafHash(Array("record 6".utf8)), policy: WitnessPolicy(Self.goPolicy))
        #expect(checkpoint.origin == "gen.test/ledger" && checkpoint.size == 13 && cosigners == ["W1", "W2"])
        #expect(throws: MerkleProof.Failure.self) {
            try proof.verify(leafHash: MerkleTree.leafHash(Array("record 7".utf8)), policy: WitnessPolicy(Self.goPolicy))
        }
    }

    @Test("every malformed line is refused")
    func malformed() throws {
        let hash = MerkleTree.leafHash([7])
        let note = try Self.log.sign(Checkpoint(origin: Self.log.name, size: 5, rootHash: MerkleTree.leafHash([8])).text)
        let good = TlogProof(extra: [1, 2, 3], index: 5, proof: [hash], checkpoint: note).text
        let line = Base64.encode(hash)
        #expect(try TlogProof(text: good).index == 5)
        #expect(
            try TlogProof(text: "c2sp.org/tlog-proof@v1\nindex 0\n" + String(repeating: line + "\n", count: 63) + "\n" + note).proof.count
                == 63)
        let header = "c2sp.org/tlog-proof@v1\n"
        func replacing(_ old: String, _ new: String) -> String { good.replacingOccurrences(of: old, with: new) }
        var cases: [String] = ["", "c2sp.org/tlog-proof@v1", header, "c2sp.org/tlog-proof@v2\nindex 0\n\n" + note]
        cases += [" " + header + "index 0\n\n" + note, replacing("\n", "\r\n")]
        cases += ["index 05", "index -5", "index +5", "index 5.0", "index 9223372036854775808", "index", "index  5"].map {
            replacing("index 5", $0)
        }
        cases.append(replacing("index 5\n", ""))  // no index line
        cases += ["extra AQI!", "extra AQID=", "extra AQJ="].map { replacing("extra AQID", $0) }  // AQJ=: stray bits, not the one spelling
        cases.append(header + "index 0\nextra AQID\n\n" + note)  // extra after the index
        cases += [Base64.encode(Array(hash.dropLast())), String(line.dropLast()), line + " "].map { replacing(line, $0) }
        cases.append(header + "index 0\n" + line + "\n")  // no empty line
        cases.append(header + "index 0\n\n")  // no checkpoint
        cases.append(header + "index 0\n" + String(repeating: line + "\n", count: 64) + "\n" + note)
        for bad in cases {
            #expect(throws: NoteError.self, "\(String(reflecting: bad))") { try TlogProof(text: bad) }
        }
    }

    @Test("verified against a policy: every entry; a wrong entry, index, hash, key, cosignature, quorum refused")
    func verification() throws {
        for index in 0..<13 {
            let proof = try TlogProof(text: Self.proof(index: index, size: 13, cosigners: [Self.w1, Self.w3]).text)
            let (checkpoint, cosigners) = try proof.verify(leafHash: MerkleTree.leafHash(Self.entries[index]), policy: Self.policy)
            #expect(checkpoint.size == 13 && cosigners == ["W1", "W3"])
        }
        let proof = try Self.proof(index: 6, size: 11, cosigners: [Self.w1, Self.w2])
        let leafHash = MerkleTree.leafHash(Self.entries[6])
        #expect(try proof.verify(leafHash: leafHash, policy: Self.policy).cosigners == ["W1", "W2"])

        func refused<E: Error>(
            _ what: String, _ error: E.Type, leafHash: MerkleTree.Hash = leafHash, _ change: (inout TlogProof) throws -> Void
        ) throws {
            var tampered = proof
            try change(&tampered)
            // Through the text, as a file would carry it.
            let read = try TlogProof(text: tampered.text)
            #expect(throws: error, "\(what)") { try read.verify(leafHash: leafHash, policy: Self.policy) }
        }
        try refused("another entry", MerkleProof.Failure.self, leafHash: MerkleTree.leafHash(Self.entries[7])) { _ in }
        try refused("the index moved", MerkleProof.Failure.self) { $0.index = 7 }
        try refused("the index past the tree", MerkleProof.Failure.self) { $0.index = 11 }
        try refused("a proof hash replaced", MerkleProof.Failure.self) { $0.proof[1] = MerkleTree.leafHash([9]) }
        try refused("a proof hash dropped", MerkleProof.Failure.self) { $0.proof.removeLast() }
        try refused("a proof hash added", MerkleProof.Failure.self) { $0.proof.append(MerkleTree.leafHash([9])) }
        try refused("signed by another key of the log's name", NoteError.self) {
            $0.checkpoint = try Self.proof(index: 6, size: 11, cosigners: [Self.w1, Self.w2], signer: NoteSigner(name: Self.log.name))
                .checkpoint
        }
        try refused("the checkpoint's root changed under its signatures", NoteError.self) {
            let root = Base64.encode(try Checkpoint(text: SignedNote.parse($0.checkpoint).text).rootHash)
            $0.checkpoint = $0.checkpoint.replacingOccurrences(of: root, with: Base64.encode(MerkleTree.leafHash([9])))
        }
        try refused("W2's cosignature broken", NoteError.self) {
            let signatures = try SignedNote.parse($0.checkpoint).signatures
            guard var bytes = Base64.decode(String(signatures[2].line.split(separator: " ")[2].dropLast())) else { return }
            bytes[bytes.count - 1] ^= 1
            $0.checkpoint = $0.checkpoint.replacingOccurrences(
                of: signatures[2].line, with: "\u{2014} \(signatures[2].name) \(Base64.encode(bytes))\n")
        }
        try refused("one cosignature of the two the quorum needs", NoteError.self) {
            $0.checkpoint = try Self.proof(index: 6, size: 11, cosigners: [Self.w2]).checkpoint
        }
    }
}
