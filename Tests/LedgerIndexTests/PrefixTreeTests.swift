import LedgerDeviceSimulator
import LedgerIndex
import Testing

@Suite("The prefix tree")
struct PrefixTreeTests {
    static func randomPairs(_ count: Int, _ random: inout SeededRandom) -> [Hash256: Hash256] {
        var pairs: [Hash256: Hash256] = [:]
        while pairs.count < count { pairs[random.hash()] = random.hash() }
        return pairs
    }

    /// Keys that share long prefixes: `base` with one bit flipped at each of `bits`.
    static func neighbours(of base: Hash256, flipping bits: [Int]) -> [Hash256] {
        bits.map { bit in
            var bytes = base.bytes
            bytes[bit >> 3] ^= 0x80 >> UInt8(bit & 7)
            return Hash256(bytes)!
        }
    }

    @Test("random sets of keys give the brute-force root, whether set in one batch or in many", arguments: [0, 1, 2, 3, 17, 300])
    func randomSets(count: Int) async throws {
        var random = SeededRandom(seed: UInt64(count) + 1)
        let pairs = Self.randomPairs(count, &random)
        let whole = PrefixTree(store: MemoryNodeStore())
        let root = try await whole.update(pairs.keys) { key, current in
            #expect(current == nil)
            return pairs[key]!
        }
        #expect(root == TestHash.root(pairs))
        #expect(try await whole.root() == root)
        #expect(count > 0 || root == .zero, "the empty tree's root is 32 zero bytes")

        let batched = PrefixTree(store: MemoryNodeStore())
        var keys = Array(pairs.keys).shuffled(using: &random)
        while !keys.isEmpty {
            let batch = keys.prefix(Int(random.next() % 7) + 1)
            keys.removeFirst(batch.count)
            _ = try await batched.update(batch) { key, _ in pairs[key]! }
        }
        #expect(try await batched.root() == root)

        // New values for some keys: the tree follows, and the old value is what `change` sees.
        var changed = pairs
        let some = pairs.keys.filter { _ in random.next() % 3 == 0 }
        for key in some { changed[key] = random.hash() }
        let updated = try await batched.update(some) { key, current in
            #expect(current == pairs[key])
            return changed[key]!
        }
        #expect(updated == TestHash.root(changed))
    }

    @Test("keys sharing up to 255 bits sit down to depth 256, with the brute-force root and proofs")
    func longPrefixes() async throws {
        var random = SeededRandom(seed: 99)
        let base = random.hash()
        let keys = [base] + Self.neighbours(of: base, flipping: [255, 254, 200, 31, 8, 7, 0])
        var pairs: [Hash256: Hash256] = [:]
        for key in keys { pairs[key] = random.hash() }
        let tree = PrefixTree(store: MemoryNodeStore())
        let root = try await tree.update(keys) { key, _ in pairs[key]! }
        #expect(root == TestHash.root(pairs))
        let proof = try await tree.proof(for: base)
        #expect(proof.depth == 256)
        #expect(try proof.verify(key: base, root: root) == .present(value: pairs[base]!))
        for absent in Self.neighbours(of: base, flipping: [253, 100, 1]) {
            #expect(try await tree.proof(for: absent).verify(key: absent, root: root) == .absent)
        }
    }

    @Test("every present key's proof gives its value, every absent key's its absence")
    func everyProofVerifies() async throws {
        var random = SeededRandom(seed: 5)
        let pairs = Self.randomPairs(500, &random)
        let tree = PrefixTree(store: MemoryNodeStore())
        let root = try await tree.update(pairs.keys) { key, _ in pairs[key]! }
        for (key, value) in pairs {
            #expect(try await tree.proof(for: key).verify(key: key, root: root) == .present(value: value))
            #expect(try await tree.value(of: key) == value)
        }
        var kinds = Set<String>()
        let nearby = pairs.keys.prefix(100).flatMap { Self.neighbours(of: $0, flipping: [12, 255]) }
        for key in (0..<300).map({ _ in random.hash() }) + nearby where pairs[key] == nil {
            let proof = try await tree.proof(for: key)
            #expect(try proof.verify(key: key, root: root) == .absent)
            #expect(try await tree.value(of: key) == nil)
            let kind = if case .empty = proof.terminal { "empty" } else { "leaf" }
            kinds.insert(kind)
        }
        #expect(kinds == ["empty", "leaf"], "absences shown both ways")
    }

    @Test("a set of keys writes and reads only the nodes on their paths: O(log n)")
    func updatesStayOnThePath() async throws {
        var random = SeededRandom(seed: 8)
        let store = CountingStore()
        let tree = PrefixTree(store: store)
        let pairs = Self.randomPairs(4000, &random)
        _ = try await tree.update(pairs.keys) { key, _ in pairs[key]! }
        let total = await store.inner.count
        let newKey = random.hash()
        // Where the new key's path ends before it is set: how far the update reads.
        let before = try await tree.proof(for: newKey).depth
        await store.reset()
        _ = try await tree.update([newKey]) { _, _ in random.hash() }
        let (asked, written, reads) = await (store.asked, store.written, store.reads)
        let depth = try await tree.proof(for: newKey).depth
        #expect(total >= 2 * 4000 - 1 && total < 3 * 4000, "n leaves and about 1.44 n parents: \(total)")
        #expect(depth > 8 && depth < 40)
        // Levels 0 ..< 16 first, then 8 at a time, until the one that holds the path's end.
        let windows = before < 16 ? 1 : 2 + (before - 16) / 8
        #expect(reads == windows && asked <= 2 * (16 + 8 * (windows - 1)), "the windows down to depth \(before), with siblings: \(asked)")
        #expect(written <= depth + 2, "the new leaf, the leaf it split, the parents on its path: \(written)")
    }

    @Test("a store holding a leaf off its path, or answering what was not asked, is refused")
    func corruptStore() async throws {
        var random = SeededRandom(seed: 21)
        let pairs = Self.randomPairs(40, &random)
        let store = MemoryNodeStore()
        let tree = PrefixTree(store: store)
        _ = try await tree.update(pairs.keys) { key, _ in pairs[key]! }
        let (position, _) = try #require(await store.all.first { if case .leaf = $0.value { true } else { false } })
        // Off the position's path by construction: the leaf taken first varies from run to run
        // (a dictionary's order), and a stranger on its path would sit there legitimately.
        var stranger = random.hash()
        while position.isOnPath(of: stranger) { stranger = random.hash() }
        await store.overwrite(position, with: .leaf(key: stranger, value: random.hash()))
        await #expect(throws: IndexCorruption.self) {
            _ = try await tree.update(pairs.keys) { _, current in current! }
        }
        let lying = PrefixTree(store: LyingStore())
        await #expect(throws: IndexCorruption.self) { _ = try await lying.proof(for: stranger) }
    }
}

/// A memory store that counts what the tree asks of it.
actor CountingStore: IndexNodeStore {
    let inner = MemoryNodeStore()
    var reads = 0
    var asked = 0
    var written = 0

    func nodes(at positions: Set<NodePosition>) async throws -> [NodePosition: IndexNode] {
        reads += 1
        asked += positions.count
        return await inner.nodes(at: positions)
    }

    func store(_ nodes: [NodePosition: IndexNode]) async throws {
        written += nodes.count
        await inner.store(nodes)
    }

    func reset() { (reads, asked, written) = (0, 0, 0) }
}

/// A store that answers a position no one asked for.
struct LyingStore: IndexNodeStore {
    func nodes(at positions: Set<NodePosition>) -> [NodePosition: IndexNode] {
        [NodePosition(depth: 9, prefix: [0, 0])!: .parent(hash: .zero)]
    }

    func store(_ nodes: [NodePosition: IndexNode]) {}
}
