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

    /// Why `proof` shows nothing of `key` under `root`; nil if it verifies.
    static func refusal(_ proof: PrefixProof, key: Hash256, root: Hash256) -> PrefixProof.Refused? {
        do {
            _ = try proof.verify(key: key, root: root)
            return nil
        } catch {
            return error
        }
    }

    /// `hash` with bit 0 set to `bit`.
    static func withBit0(_ hash: Hash256, _ bit: UInt8) -> Hash256 { hash.bit(0) == bit ? hash : flip(hash, bit: 0) }

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

    @Test("another key's leaf off the key's path, or the key's own, is refused by rule 2 though hashes fold")
    func otherLeafRule() throws {
        var random = SeededRandom(seed: 3)
        let key = Self.withBit0(random.hash(), 0)
        let (sibling, value) = (random.hash(), random.hash())  // the sibling is not zero: rule 3 holds
        // A root `parent(leaf(other), s)`: the key's path goes left, where `other`'s bit 0 says it cannot sit.
        let other = Self.withBit0(random.hash(), 1)
        let offPath = PrefixProof(terminal: .otherLeaf(key: other, value: value), siblings: [sibling])
        #expect(Self.refusal(offPath, key: key, root: TestHash.parent(TestHash.leaf(other, value), sibling))?.rule == .otherLeaf)
        // The key's own leaf, passed off as another's.
        let own = PrefixProof(terminal: .otherLeaf(key: key, value: value), siblings: [sibling])
        #expect(Self.refusal(own, key: key, root: TestHash.parent(TestHash.leaf(key, value), sibling))?.rule == .otherLeaf)
        // The same shape with a leaf that may sit there shows the key absent.
        let near = Self.withBit0(random.hash(), 0)
        let onPath = PrefixProof(terminal: .otherLeaf(key: near, value: value), siblings: [sibling])
        #expect(try onPath.verify(key: key, root: TestHash.parent(TestHash.leaf(near, value), sibling)) == .absent)
    }

    @Test("a path of 257 levels is refused by rule 1, before any other rule or a bit past 255 is read")
    func tooDeep() throws {
        var random = SeededRandom(seed: 4)
        let key = random.hash()
        let siblings = (0..<257).map { _ in random.hash() }
        // Rule 2 would refuse this one too (255 shared bits, under 257), naming itself.
        let leaf = PrefixProof(terminal: .otherLeaf(key: Self.flip(key, bit: 255), value: random.hash()), siblings: siblings)
        let refusal = Self.refusal(leaf, key: key, root: random.hash())
        #expect(refusal?.rule == .depth, "\(String(describing: refusal))")
        // Without rule 1 these would read bit 256 of the key and trap: asked only once it holds.
        guard refusal?.rule == .depth else { return }
        for terminal in [PrefixProof.Terminal.found(value: random.hash()), .empty] {
            #expect(Self.refusal(PrefixProof(terminal: terminal, siblings: siblings), key: key, root: random.hash())?.rule == .depth)
        }
    }

    @Test("a proof past 256 levels writes as depth 257 and no sibling, which reads back refused, at any depth")
    func tooDeepAsBytes() throws {
        let siblings = [Hash256](repeating: Hash256([UInt8](repeating: 1, count: 32))!, count: 257)
        let bytes = PrefixProof(terminal: .empty, siblings: siblings).bytes
        #expect(bytes == [3, 0x01, 0x01])
        let read = #expect(throws: PrefixProof.Refused.self) { try PrefixProof(bytes: bytes) }
        #expect(read?.rule == .depth)
        // Without the cap, 65,536 siblings would trap on the u16: asked only once it holds.
        guard bytes.count == 3 else { return }
        let huge = PrefixProof(terminal: .found(value: .zero), siblings: [Hash256](repeating: siblings[0], count: 65_536))
        #expect(huge.bytes == [1] + Hash256.zero.bytes + [0x01, 0x01])
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
