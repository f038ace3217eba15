import LedgerDeviceSimulator
import LedgerIndex
import Testing

@Suite("Prefix proofs")
struct PrefixProofTests {
    struct Fixture {
        var pairs: [Hash256: Hash256]
        var root: Hash256
        var tree: PrefixTree<MemoryNodeStore>
        var random: SeededRandom
    }

    static func fixture(_ count: Int = 300) async throws -> Fixture {
        var random = SeededRandom(seed: 42)
        let pairs = PrefixTreeTests.randomPairs(count, &random)
        let tree = PrefixTree(store: MemoryNodeStore())
        let root = try await tree.update(pairs.keys) { key, _ in pairs[key]! }
        return Fixture(pairs: pairs, root: root, tree: tree, random: random)
    }

    static func flip(_ hash: Hash256, bit: Int = 77) -> Hash256 {
        var bytes = hash.bytes
        bytes[bit >> 3] ^= 0x80 >> UInt8(bit & 7)
        return Hash256(bytes)!
    }

    static func refused(_ proof: PrefixProof, key: Hash256, root: Hash256) -> Bool {
        (try? proof.verify(key: key, root: root)) == nil
    }

    @Test("a changed value, any changed sibling, or a key that is not the proof's is refused")
    func tampering() async throws {
        var f = try await Self.fixture()
        for key in f.pairs.keys.prefix(20) {
            let proof = try await f.tree.proof(for: key)
            #expect(try proof.verify(key: key, root: f.root) == .present(value: f.pairs[key]!))
            #expect(
                Self.refused(
                    PrefixProof(terminal: .found(value: Self.flip(f.pairs[key]!)), siblings: proof.siblings), key: key, root: f.root))
            for level in proof.siblings.indices {
                var siblings = proof.siblings
                siblings[level] = Self.flip(siblings[level], bit: level)
                #expect(Self.refused(PrefixProof(terminal: proof.terminal, siblings: siblings), key: key, root: f.root), "sibling \(level)")
            }
            #expect(Self.refused(proof, key: f.random.hash(), root: f.root), "another key")
            #expect(Self.refused(proof, key: Self.flip(key, bit: 255), root: f.root), "a key one bit away")
            #expect(Self.refused(proof, key: key, root: Self.flip(f.root)), "another root")
        }
    }

    @Test("a present key passed off as absent, by an empty child or another key's leaf, is refused")
    func presenceAsAbsence() async throws {
        var f = try await Self.fixture()
        let key = f.pairs.keys.first!
        let proof = try await f.tree.proof(for: key)
        #expect(Self.refused(PrefixProof(terminal: .empty, siblings: proof.siblings), key: key, root: f.root))
        #expect(
            Self.refused(
                PrefixProof(terminal: .otherLeaf(key: key, value: f.pairs[key]!), siblings: proof.siblings), key: key, root: f.root))
        // A neighbour's genuine proof of the key sharing all but the last bit.
        let neighbour = Self.flip(key, bit: 255)
        let absence = try await f.tree.proof(for: neighbour)
        #expect(try absence.verify(key: neighbour, root: f.root) == .absent)
        #expect(Self.refused(absence, key: key, root: f.root))
        // Another key's leaf that is not on the key's path.
        let other = f.pairs.first { $0.key.commonPrefix(with: key) < proof.depth }!
        let offPath = PrefixProof(terminal: .otherLeaf(key: other.key, value: other.value), siblings: proof.siblings)
        #expect(Self.refused(offPath, key: key, root: f.root))
        // Absent keys' proofs hold for them only.
        for _ in 0..<50 {
            let absent = f.random.hash()
            let proof = try await f.tree.proof(for: absent)
            #expect(try proof.verify(key: absent, root: f.root) == .absent)
            #expect(Self.refused(proof, key: key, root: f.root))
        }
    }

    @Test("the wrong depth (a sibling dropped or added, at either end) is refused")
    func wrongDepth() async throws {
        var f = try await Self.fixture()
        for key in Array(f.pairs.keys.prefix(10)) + (0..<10).map({ _ in f.random.hash() }) {
            let proof = try await f.tree.proof(for: key)
            let s = proof.siblings
            for siblings in [Array(s.dropLast()), Array(s.dropFirst()), s + [f.random.hash()], [f.random.hash()] + s, s + [.zero]] {
                #expect(Self.refused(PrefixProof(terminal: proof.terminal, siblings: siblings), key: key, root: f.root))
            }
        }
    }

    @Test("a one-key parent, a shape the tree never makes, is refused though its hashes agree")
    func oneKeyParent() throws {
        var random = SeededRandom(seed: 1)
        let (key, value) = (random.hash(), random.hash())
        let single = TestHash.leaf(key, value)
        #expect(try PrefixProof(terminal: .found(value: value), siblings: []).verify(key: key, root: single) == .present(value: value))
        let lopsided = key.bit(0) == 0 ? TestHash.parent(single, .zero) : TestHash.parent(.zero, single)
        #expect(Self.refused(PrefixProof(terminal: .found(value: value), siblings: [.zero]), key: key, root: lopsided))
        let emptyUnder = TestHash.parent(.zero, .zero)
        #expect(Self.refused(PrefixProof(terminal: .empty, siblings: [.zero]), key: key, root: emptyUnder))
    }

    @Test("the empty tree proves every key absent, and nothing present")
    func emptyTree() async throws {
        var random = SeededRandom(seed: 2)
        let tree = PrefixTree(store: MemoryNodeStore())
        let key = random.hash()
        let proof = try await tree.proof(for: key)
        #expect(proof == PrefixProof(terminal: .empty, siblings: []))
        #expect(try proof.verify(key: key, root: .zero) == .absent)
        #expect(Self.refused(PrefixProof(terminal: .found(value: .zero), siblings: []), key: key, root: .zero))
        #expect(Self.refused(proof, key: key, root: random.hash()))
    }

    @Test("proof bytes read back as the proof; cut short, extended, or of another kind, they are refused")
    func bytes() async throws {
        var f = try await Self.fixture(60)
        var seen = Set<UInt8>()
        for key in Array(f.pairs.keys.prefix(3)) + (0..<40).map({ _ in f.random.hash() }) {
            let proof = try await f.tree.proof(for: key)
            let bytes = proof.bytes
            seen.insert(bytes[0])
            #expect(try PrefixProof(bytes: bytes) == proof)
            #expect(bytes.count == 3 + 32 * proof.depth + [1: 32, 2: 64, 3: 0][bytes[0]]!)
            for cut in 0..<bytes.count { #expect(throws: PrefixProof.Refused.self) { try PrefixProof(bytes: Array(bytes.prefix(cut))) } }
            #expect(throws: PrefixProof.Refused.self) { try PrefixProof(bytes: bytes + [0]) }
        }
        #expect(seen == [1, 2, 3])
        for kind: UInt8 in [0, 4, 255] {
            #expect(throws: PrefixProof.Refused.self) { try PrefixProof(bytes: [kind, 0, 0]) }
        }
        let deep = [3, 0x01, 0x01] + [UInt8](repeating: 1, count: 32 * 257)
        #expect(throws: PrefixProof.Refused.self) { try PrefixProof(bytes: deep) }
        let deepest = [3, 0x01, 0x00] + [UInt8](repeating: 1, count: 32 * 256)
        #expect(try PrefixProof(bytes: deepest).depth == 256)
    }
}
