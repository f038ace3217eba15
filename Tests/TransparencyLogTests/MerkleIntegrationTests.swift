import Testing
import TransparencyLog

/// The integration of new leaves, without a database: the nodes and root it gives equal the
/// RFC 6962/9162 tree's (`MerkleTree.root`) for many sizes, however the leaves are batched,
/// and when resumed from a right edge read back from the stored nodes (as the checkpointer
/// resumes).
struct MerkleIntegrationTests {
    static let leafHashes = (0..<5000).map { MerkleTree.leafHash(Array("leaf \($0)".utf8)) }

    /// A seeded generator (SplitMix64), so a failing chunking can be replayed.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// The leaves `0 ..< size` in one batch, from the empty tree.
    static func allAtOnce(_ size: Int) -> MerkleIntegration.Result {
        MerkleIntegration.integrate(MerkleFrontier(), leafHashes: leafHashes[..<size])
    }

    /// The stored tree the result describes: its nodes by (level, index), each stored once.
    static func stored(_ results: [MerkleIntegration.Result]) -> [MerkleTree.Node: MerkleTree.Hash] {
        var stored: [MerkleTree.Node: MerkleTree.Hash] = [:]
        for result in results {
            for (node, hash) in zip(result.nodes, result.hashes) {
                let previous = stored.updateValue(hash, forKey: node)
                #expect(previous == nil, "\(node) completed twice")
            }
        }
        return stored
    }

    @Test func theRootOfEverySizeIsTheRFCRoot() {
        for size in 0...600 {
            let result = Self.allAtOnce(size)
            #expect(result.frontier.size == Int64(size))
            #expect(result.root == MerkleTree.root(leafHashes: Self.leafHashes[..<size]), "size \(size)")
            // Every full subtree of level 1 and up: 2n − popcount(n) subtrees, n of them leaves.
            #expect(result.nodes.count == size - size.nonzeroBitCount, "size \(size)")
            #expect(result.nodes.allSatisfy { $0.level > 0 && $0.leaves.upperBound <= Int64(size) })
        }
        for size in [1023, 1024, 1025, 4096, 5000] {
            #expect(Self.allAtOnce(size).root == MerkleTree.root(leafHashes: Self.leafHashes[..<size]), "size \(size)")
        }
    }

    @Test func theRFC6962VectorsRoots() throws {
        let v = try MerkleTreeTests.Vectors.load()
        let leafHashes = v.leaves.map { MerkleTree.leafHash(MerkleTreeTests.hex($0)) }
        #expect(MerkleIntegration.integrate(MerkleFrontier(), leafHashes: [MerkleTree.Hash]()).root == MerkleTreeTests.hex(v.emptyRoot))
        for (index, root) in v.roots.enumerated() {
            let result = MerkleIntegration.integrate(MerkleFrontier(), leafHashes: leafHashes[...index])
            #expect(result.root == MerkleTreeTests.hex(root), "size \(index + 1)")
        }
    }

    @Test func eachNodeIsTheRootOfItsLeaves() {
        let result = Self.allAtOnce(2000)
        #expect(Set(result.nodes).count == result.nodes.count)
        for (node, hash) in zip(result.nodes, result.hashes) {
            let leaves = Int(node.leaves.lowerBound)..<Int(node.leaves.upperBound)
            #expect(MerkleTree.root(leafHashes: Self.leafHashes[leaves]) == hash, "\(node)")
        }
        // The stored nodes make up every range's hash, as proofs read them.
        let stored = Self.stored([result])
        for size in stride(from: Int64(2), through: 2000, by: 38) {
            let fromNodes = MerkleTree.hash(of: 0..<size) { node in
                node.level == 0 ? Optional(Self.leafHashes[Int(node.index)]) : stored[node]
            }
            #expect(fromNodes == MerkleTree.root(leafHashes: Self.leafHashes[..<Int(size)]), "size \(size)")
        }
    }

    /// Integrating 1 ..< n in random chunks gives the nodes of integrating all at once, in the
    /// same order, and after each chunk the root of the tree of that size.
    @Test func randomChunksGiveTheSameNodesAndRoots() {
        var rng = Seeded(state: 39)
        for _ in 0..<40 {
            let size = Int.random(in: 0...2000, using: &rng)
            let whole = Self.allAtOnce(size)
            var frontier = MerkleFrontier()
            var chunks: [MerkleIntegration.Result] = []
            while frontier.size < Int64(size) {
                let start = Int(frontier.size)
                let end = min(size, start + Int.random(in: 0...300, using: &rng))
                let chunk = MerkleIntegration.integrate(frontier, leafHashes: Self.leafHashes[start..<end])
                #expect(chunk.root == MerkleTree.root(leafHashes: Self.leafHashes[..<end]), "\(start) ..< \(end) of \(size)")
                frontier = chunk.frontier
                chunks.append(chunk)
            }
            #expect(frontier == whole.frontier)
            #expect(chunks.flatMap(\.nodes) == whole.nodes, "size \(size)")
            #expect(chunks.flatMap(\.hashes) == whole.hashes, "size \(size)")
            #expect(Self.stored(chunks) == Self.stored([whole]))
        }
    }

    /// Resumed as the checkpointer resumes: from the right edge of the stored nodes (levels 1
    /// and up, so an even size: a last odd leaf is integrated again), the rest of the leaves
    /// complete exactly the nodes not stored yet.
    @Test func resumedFromTheStoredNodes() throws {
        var rng = Seeded(state: 6962)
        for _ in 0..<100 {
            let size = Int.random(in: 0...2000, using: &rng)
            let done = Int.random(in: 0...size, using: &rng)
            var stored = Self.stored([Self.allAtOnce(done)])
            let pairs = stored.keys.filter { $0.level == 1 }.count
            let even = Int64(2 * pairs)
            #expect(even == Int64(done - done % 2))
            let edge = try MerkleFrontier(size: even, hashes: MerkleFrontier.nodes(size: even).compactMap { stored[$0] })
            let rest = MerkleIntegration.integrate(edge, leafHashes: Self.leafHashes[Int(even)..<size])
            for (node, hash) in zip(rest.nodes, rest.hashes) {
                let previous = stored.updateValue(hash, forKey: node)
                #expect(previous == nil, "\(node) stored twice (resumed at \(done) of \(size))")
            }
            let whole = Self.allAtOnce(size)
            #expect(stored == Self.stored([whole]))
            #expect(rest.frontier == whole.frontier && rest.root == whole.root)
        }
    }
}
