import Foundation
import LedgerIndex
import Testing

@Suite("Index keys")
struct IndexKeyTests {
    /// "café" twice, canonically equivalent: "é" as one code point, and as "e" then U+0301.
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test("ids canonically equivalent but not the same bytes are two keys, as their hashes are")
    func bytesNotCanonicalEquivalence() {
        #expect(Self.composed == Self.decomposed, "String's == is canonical equivalence")
        #expect(!Self.composed.utf8.elementsEqual(Self.decomposed.utf8))
        let (a, b) = (IndexKey.collaboration(Self.composed), IndexKey.collaboration(Self.decomposed))
        #expect(a.hash != b.hash)
        #expect(a != b)
        #expect(Set([a, b]).count == 2)
        var listed: [IndexKey: Int] = [:]  // not a literal: one with a key twice traps
        (listed[a], listed[b]) = (1, 2)
        #expect(listed.count == 2 && listed[a] == 1 && listed[b] == 2)
        #expect(a == .collaboration("caf\u{E9}") && a.hashValue == IndexKey.collaboration("caf\u{E9}").hashValue)
        let identity = IndexKey.identity(Hash256(Array(repeating: 1, count: 32))!)
        #expect(identity == .identity(Hash256(Array(repeating: 1, count: 32))!) && identity != a)
        #expect(IndexMap.keys(streamId: "collaboration-" + Self.composed, data: "{}") == [a])
        #expect(IndexMap.keys(streamId: "collaboration-" + Self.decomposed, data: "{}") == [b])
    }

    @Test("a verifier hashes the key it asks about: a proof answers for its own key and no other")
    func verifyByKey() async throws {
        let rootHash = Hash256(Array(repeating: 7, count: 32))!
        var log = SimulatedLog()
        log.append(stream: "collaboration-" + Self.composed, type: "IdentityAdded", data: #"{"rootHash":"\#(rootHash.base64)"}"#)
        log.append(stream: "collaboration-" + Self.decomposed, type: "IdentityAdded", data: "{}")
        let index = LogIndex(store: MemoryNodeStore())
        let root = try await index.append(log.leaves, from: 1)
        let listed: [(IndexKey, [Int64])] = [
            (.collaboration(Self.composed), [1]), (.collaboration(Self.decomposed), [2]), (.identity(rootHash), [1]),
        ]
        for (key, positions) in listed {
            let proof = try await index.tree.proof(for: key.hash)
            let value = IndexValue.chain(positions.map { IndexValue.Entry(position: $0, leafHash: log.leafHash($0))! })
            #expect(try proof.verify(key: key, root: root) == .present(value: value), "\(key)")
            for (other, _) in listed where other != key {
                #expect(throws: PrefixProof.Refused.self, "\(key)'s proof for \(other)") { try proof.verify(key: other, root: root) }
            }
        }
        let absent = IndexKey.collaboration("cafe")
        #expect(try await index.tree.proof(for: absent.hash).verify(key: absent, root: root) == .absent)
    }
}
