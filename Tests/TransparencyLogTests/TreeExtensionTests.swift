import Testing
import TransparencyLog

/// The checkpointer floor's consistency check (`TreeExtension`), pure: a tree that extends the
/// earlier checkpoint passes for every pair of sizes; a shorter one names the missing range; a
/// fork after the floor passes, one before it fails; and every way a store's proof can lie fails.
struct TreeExtensionTests {
    static let leaves = (0..<300).map { MerkleTree.leafHash(Array("event \($0)".utf8)) }
    /// The same first 250 leaves, then others: a log cut to 250 and written to again.
    static let forked = Array(leaves[..<250]) + (250..<300).map { MerkleTree.leafHash(Array("other \($0)".utf8)) }

    static func root(_ leaves: [MerkleTree.Hash], _ n: Int) -> MerkleTree.Hash { MerkleTree.root(leafHashes: leaves[..<n]) }
    /// The consistency proof from `m` to `n` as a store holding `leaves` computes it.
    static func proof(_ leaves: [MerkleTree.Hash], _ m: Int, _ n: Int) -> [MerkleTree.Hash] {
        MerkleTree.consistencyRanges(from: Int64(m), to: Int64(n))
            .map { MerkleTree.root(leafHashes: leaves[Int($0.lowerBound)..<Int($0.upperBound)]) }
    }
    /// The verdict on the tree of `n` leaves of `store` (proof and root from it) against the
    /// published tree of `m` leaves of `published`.
    static func verdict(
        _ m: Int, of published: [MerkleTree.Hash] = TreeExtensionTests.leaves, _ n: Int,
        from store: [MerkleTree.Hash] = TreeExtensionTests.leaves
    ) -> TreeExtension.Verdict {
        TreeExtension.check(
            earlierSize: Int64(m), earlierRoot: Self.root(published, m), size: Int64(n), root: Self.root(store, n),
            proof: n > m ? Self.proof(store, m, n) : [])
    }

    static func differs(_ verdict: TreeExtension.Verdict) -> Bool {
        if case .differs = verdict { return true }
        return false
    }

    @Test("a tree that extends the earlier one passes, for sizes on and off powers of two")
    func extends() {
        for m in [0, 1, 2, 3, 7, 8, 9, 100, 128, 250, 266] {
            for n in [m, m + 1, m + 2, 256, 287, 300] where n >= m && n <= 300 {
                #expect(Self.verdict(m, n) == .extends, "\(m) → \(n)")
            }
        }
        // A fork after the earlier checkpoint is no contradiction of it.
        #expect(Self.verdict(250, 287, from: Self.forked) == .extends)
    }

    @Test("a shorter tree names the events it lacks (positions, 1-based)")
    func shorter() {
        #expect(Self.verdict(266, 250) == .shorter(missing: 251...266))
        #expect(Self.verdict(266, 265) == .shorter(missing: 266...266))
        #expect(Self.verdict(1, 0) == .shorter(missing: 1...1))
    }

    @Test("other leaves before the earlier size fail: the same size with another root, or a forked larger tree")
    func forks() {
        #expect(Self.differs(Self.verdict(266, 266, from: Self.forked)))
        #expect(Self.differs(Self.verdict(266, 287, from: Self.forked)))
        #expect(Self.differs(Self.verdict(251, 300, from: Self.forked)))
        // A store that keeps the old nodes for its proof but signs the forked root.
        let lying = TreeExtension.check(
            earlierSize: 266, earlierRoot: Self.root(Self.leaves, 266), size: 287, root: Self.root(Self.forked, 287),
            proof: Self.proof(Self.leaves, 266, 287))
        #expect(Self.differs(lying))
        // The empty tree has one root.
        #expect(
            Self.differs(
                TreeExtension.check(earlierSize: 0, earlierRoot: Self.leaves[0], size: 5, root: Self.root(Self.leaves, 5), proof: [])))
        #expect(
            Self.differs(
                TreeExtension.check(earlierSize: -1, earlierRoot: MerkleTree.emptyRoot, size: 5, root: Self.root(Self.leaves, 5), proof: [])
            ))
    }

    @Test("every broken proof fails: a flipped bit, a hash too few or too many, a proof for another size")
    func brokenProofs() {
        let (m, n) = (266, 287)
        let good = Self.proof(Self.leaves, m, n)
        func check(_ proof: [MerkleTree.Hash], size: Int? = nil) -> TreeExtension.Verdict {
            let size = size ?? n
            return TreeExtension.check(
                earlierSize: Int64(m), earlierRoot: Self.root(Self.leaves, m), size: Int64(size), root: Self.root(Self.leaves, size),
                proof: proof)
        }
        #expect(check(good) == .extends)
        for index in good.indices {
            var flipped = good
            flipped[index][7] ^= 1
            #expect(Self.differs(check(flipped)), "bit flipped in hash \(index)")
        }
        #expect(Self.differs(check(Array(good.dropLast()))))
        #expect(Self.differs(check(good + [good[0]])))
        #expect(Self.differs(check([])))
        #expect(Self.differs(check(good, size: n + 1)))
        #expect(Self.differs(check(Self.proof(Self.leaves, m - 1, n))))
        #expect(Self.differs(check([MerkleTree.Hash(repeating: 0, count: 31)] + good.dropFirst())), "a hash of 31 bytes")
        // Equal sizes take no proof.
        #expect(Self.differs(check([good[0]], size: m)))
    }
}
