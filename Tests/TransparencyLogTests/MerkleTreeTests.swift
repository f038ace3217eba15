import Foundation
import Testing
import TransparencyLog

/// The tree against the RFC 6962 reference vectors, and proofs made from ranges checked by
/// the RFC 9162 verifier for many sizes, with every way to break them refused.
struct MerkleTreeTests {
    struct Vectors: Decodable {
        struct Inclusion: Decodable {
            var leafIndex: Int64
            var treeSize: Int64
            var path: [String]
        }
        struct Consistency: Decodable {
            var size1: Int64
            var size2: Int64
            var path: [String]
        }
        var leaves: [String]
        var emptyRoot: String
        var roots: [String]
        var inclusion: [Inclusion]
        var consistency: [Consistency]

        static func load() throws -> Vectors {
            let url = Bundle.module.resourceURL!.appendingPathComponent("Vectors/ct-vectors.json")
            return try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
        }
    }

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

    /// A proof made the way the store makes it: each range's hash from the full nodes under it.
    static func proof(_ ranges: [Range<Int64>], leafHashes: [[UInt8]]) -> [[UInt8]] {
        ranges.map { range in
            MerkleTree.hash(of: range) { node in
                MerkleTree.root(leafHashes: leafHashes[Int(node.leaves.lowerBound)..<Int(node.leaves.upperBound)])
            }!
        }
    }

    @Test func referenceRoots() throws {
        let v = try Vectors.load()
        let leafHashes = v.leaves.map { MerkleTree.leafHash(Self.hex($0)) }
        #expect(MerkleTree.emptyRoot == Self.hex(v.emptyRoot))
        #expect(MerkleFrontier().root == Self.hex(v.emptyRoot))
        var frontier = MerkleFrontier()
        for (size, root) in v.roots.enumerated() {
            _ = frontier.append(leafHash: leafHashes[size])
            #expect(MerkleTree.root(leafHashes: leafHashes[0...size]) == Self.hex(root), "size \(size + 1)")
            #expect(frontier.root == Self.hex(root), "frontier at size \(size + 1)")
        }
        #expect(v.roots.count == 8)
    }

    @Test func referenceInclusionProofs() throws {
        let v = try Vectors.load()
        let leafHashes = v.leaves.map { MerkleTree.leafHash(Self.hex($0)) }
        for c in v.inclusion {
            let expected = c.path.map(Self.hex)
            let made = Self.proof(MerkleTree.inclusionRanges(leaf: c.leafIndex, size: c.treeSize), leafHashes: leafHashes)
            #expect(made == expected, "leaf \(c.leafIndex) of \(c.treeSize)")
            try MerkleProof.verifyInclusion(
                leafIndex: c.leafIndex, treeSize: c.treeSize, leafHash: leafHashes[Int(c.leafIndex)], proof: expected,
                root: Self.hex(v.roots[Int(c.treeSize) - 1]))
        }
        #expect(v.inclusion.count == 36)
    }

    @Test func referenceConsistencyProofs() throws {
        let v = try Vectors.load()
        let leafHashes = v.leaves.map { MerkleTree.leafHash(Self.hex($0)) }
        for c in v.consistency {
            let expected = c.path.map(Self.hex)
            let made = Self.proof(MerkleTree.consistencyRanges(from: c.size1, to: c.size2), leafHashes: leafHashes)
            #expect(made == expected, "\(c.size1) → \(c.size2)")
            try MerkleProof.verifyConsistency(
                size1: c.size1, size2: c.size2, root1: Self.hex(v.roots[Int(c.size1) - 1]),
                root2: Self.hex(v.roots[Int(c.size2) - 1]), proof: expected)
        }
        #expect(v.consistency.count == 36)
    }

    @Test func frontierCompletesTheNodesOfEachSize() {
        var frontier = MerkleFrontier()
        var stored: [MerkleTree.Node: [UInt8]] = [:]
        let leafHashes = (0..<300).map { MerkleTree.leafHash(Array("leaf \($0)".utf8)) }
        for hash in leafHashes {
            for (node, h) in frontier.append(leafHash: hash) { stored[node] = h }
            let size = Int(frontier.size)
            // Every stored node is the root of its leaves; the frontier is made of stored nodes.
            #expect(MerkleTree.hash(of: 0..<frontier.size) { stored[$0] } == MerkleTree.root(leafHashes: leafHashes[0..<size]))
            #expect(MerkleFrontier.nodes(size: frontier.size).map { stored[$0]! } == frontier.hashes)
        }
        #expect(stored.count == 2 * 300 - 300.nonzeroBitCount)
        for (node, hash) in stored {
            #expect(MerkleTree.root(leafHashes: leafHashes[Int(node.leaves.lowerBound)..<Int(node.leaves.upperBound)]) == hash)
        }
    }

    /// Random sizes up to 3,000: every proof made verifies; flipped bits, a hash too few or too
    /// many, a size or index off by one, are each refused.
    @Test func randomProofsVerifyAndBrokenOnesDoNot() throws {
        var rng = SystemRandomNumberGenerator()
        let leafHashes = (0..<3000).map { MerkleTree.leafHash(Array("event \($0)".utf8)) }
        var frontier = MerkleFrontier()
        var roots: [[UInt8]] = [MerkleTree.emptyRoot]
        for hash in leafHashes {
            _ = frontier.append(leafHash: hash)
            roots.append(frontier.root)
        }
        for _ in 0..<200 {
            let size = Int64.random(in: 1...3000, using: &rng)
            let leaf = Int64.random(in: 0..<size, using: &rng)
            let proof = Self.proof(MerkleTree.inclusionRanges(leaf: leaf, size: size), leafHashes: leafHashes)
            let (leafHash, root) = (leafHashes[Int(leaf)], roots[Int(size)])
            try MerkleProof.verifyInclusion(leafIndex: leaf, treeSize: size, leafHash: leafHash, proof: proof, root: root)
            func refused(_ i: Int64, _ n: Int64, _ p: [[UInt8]], _ l: [UInt8] = leafHash, _ r: [UInt8]? = nil) -> Bool {
                (try? MerkleProof.verifyInclusion(leafIndex: i, treeSize: n, leafHash: l, proof: p, root: r ?? root)) == nil
            }
            #expect(refused(leaf, size, proof, flipped(leafHash)))
            #expect(refused(leaf, size, proof, leafHash, flipped(root)))
            // The same proof at a size off by one, against that size's own root.
            if size < 3000 { #expect(refused(leaf, size + 1, proof, leafHash, roots[Int(size) + 1])) }
            if size > leaf + 1 { #expect(refused(leaf, size - 1, proof, leafHash, roots[Int(size) - 1])) }
            #expect(refused(leaf ^ 1, size, proof) || leaf ^ 1 >= size)
            #expect(refused(size, size, proof))
            if !proof.isEmpty {
                #expect(refused(leaf, size, Array(proof.dropLast())))
                #expect(refused(leaf, size, proof.enumerated().map { $0.offset == proof.count / 2 ? flipped($0.element) : $0.element }))
            }
            #expect(refused(leaf, size, proof + [leafHash]))

            let size1 = Int64.random(in: 0...size, using: &rng)
            let consistency = Self.proof(MerkleTree.consistencyRanges(from: size1, to: size), leafHashes: leafHashes)
            let root1 = roots[Int(size1)]
            try MerkleProof.verifyConsistency(size1: size1, size2: size, root1: root1, root2: root, proof: consistency)
            func inconsistent(_ m: Int64, _ n: Int64, _ p: [[UInt8]], _ r1: [UInt8] = root1, _ r2: [UInt8]? = nil) -> Bool {
                (try? MerkleProof.verifyConsistency(size1: m, size2: n, root1: r1, root2: r2 ?? root, proof: p)) == nil
            }
            if size1 > 0 {
                #expect(inconsistent(size1, size, consistency, flipped(root1)))
                #expect(inconsistent(size1, size, consistency, root1, flipped(root)))
            }
            if size1 > 0 && size1 < size {
                #expect(inconsistent(size1 + 1, size, consistency))
                #expect(inconsistent(size1, size, Array(consistency.dropLast())))
                #expect(inconsistent(size1, size, consistency + [root]))
                #expect(inconsistent(size1, size, [flipped(consistency[0])] + consistency.dropFirst()))
            }
        }
        #expect(throws: MerkleProof.Failure.self) {
            try MerkleProof.verifyConsistency(size1: 5, size2: 4, root1: roots[5], root2: roots[4], proof: [])
        }
    }

    func flipped(_ hash: [UInt8]) -> [UInt8] {
        var hash = hash
        hash[hash.count - 1] ^= 0x01
        return hash
    }
}
