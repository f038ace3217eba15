import LedgerDeviceSimulator
import LedgerIndex
import Testing

@Suite("The log's index")
struct LogIndexTests {
    @Test("folded in batches of any size, the index equals a full scan of the leaves at every size")
    func equalsFullScan() async throws {
        let log = SimulatedLog(seed: 17, collaborations: 20, eventsEach: 30)
        var random = SeededRandom(seed: 4)
        let index = LogIndex(store: MemoryNodeStore())
        var size = 0
        while size < log.leaves.count {
            let count = min(Int(random.next() % 40), log.leaves.count - size)
            let root = try await index.append(log.leaves[size..<size + count], from: Int64(size + 1))
            size += count
            #expect(root == TestHash.root(log.pairs(upTo: size)), "at \(size)")
        }
        let root = try await index.tree.root()
        for (key, positions) in log.expected {
            let proof = try await index.tree.proof(for: key.hash)
            let value = IndexValue.chain(positions.map { IndexValue.Entry(position: $0, leafHash: log.leafHash($0))! })
            #expect(try proof.verify(key: key, root: root) == .present(value: value), "\(key)")
        }
        // TRUST.md's figures: a key comes with every four or five events of the simulator's mix.
        #expect(log.expected.count * 6 > log.leaves.count && log.expected.count * 3 < log.leaves.count, "\(log.expected.count) keys")
    }

    @Test("a position dropped, added or swapped, or a leaf changed, gives another value")
    func valuesCommitToTheList() {
        var random = SeededRandom(seed: 6)
        let entries = (1...6).map { IndexValue.Entry(position: Int64($0 * 3), leafHash: random.hash())! }
        let value = IndexValue.chain(entries)
        #expect(IndexValue.extend(IndexValue.chain(entries.prefix(4)), with: entries.suffix(2)) == value)
        var others = [entries.dropLast(), entries.dropFirst(), entries + [entries[0]]].map { IndexValue.chain($0) }
        others.append(IndexValue.chain([entries[1], entries[0]] + entries.dropFirst(2)))
        others.append(IndexValue.chain([IndexValue.Entry(position: 4, leafHash: entries[0].leafHash)!] + entries.dropFirst()))
        others.append(IndexValue.chain([IndexValue.Entry(position: 3, leafHash: random.hash())!] + entries.dropFirst()))
        #expect(!others.contains(value) && Set(others).count == others.count)
        #expect(IndexValue.chain([]) == .zero)
        #expect(IndexValue.Entry(position: 0, leafHash: .zero) == nil && IndexValue.Entry(position: -1, leafHash: .zero) == nil)
    }

    @Test("hashes are the bytes docs/TRUST.md writes: tags 0x10 to 0x14, u64 positions")
    func hashesAsWritten() {
        let id = "0b9e0a52-5f7b-4d59-8d1f-6c1c7f0e2a11"
        #expect(IndexKey.collaboration(id).hash.bytes == TestHash.sha256([0x10] + Array(id.utf8)))
        let rootHash = Hash256([UInt8](repeating: 3, count: 32))!
        #expect(IndexKey.identity(rootHash).hash.bytes == TestHash.sha256([0x11] + rootHash.bytes))
        let leafHash = Hash256([UInt8](repeating: 5, count: 32))!
        let step = TestHash.sha256([0x12] + [UInt8](repeating: 0, count: 32) + [0, 0, 0, 0, 0, 0, 0x01, 0x02] + leafHash.bytes)
        #expect(IndexValue.chain([IndexValue.Entry(position: 258, leafHash: leafHash)!]).bytes == step)
        #expect(IndexHashing.treeLeaf(key: rootHash, value: leafHash) == TestHash.leaf(rootHash, leafHash))
        #expect(IndexHashing.treeParent(rootHash, leafHash) == TestHash.parent(rootHash, leafHash))
    }

    @Test("positions below 1, or running past the largest, are refused before any work")
    func positionsInRange() async throws {
        let index = LogIndex(store: MemoryNodeStore())
        await #expect(throws: LogIndex<MemoryNodeStore>.Refused.self) { _ = try await index.append([[1]], from: 0) }
        await #expect(throws: LogIndex<MemoryNodeStore>.Refused.self) { _ = try await index.append([[1], [2]], from: .max) }
        #expect(try await index.append([[1]], from: .max) == .zero, "a leaf that is no event yields no key")
    }
}
