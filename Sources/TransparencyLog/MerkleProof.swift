/// Checks inclusion and consistency proofs exactly as RFC 9162 §2.1.3.2 and §2.1.4.2 say:
/// what an auditor runs, independent of how the proofs were made.
public enum MerkleProof {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Throws unless `proof` shows the leaf `leafHash` at `leafIndex` in the tree of
    /// `treeSize` leaves whose root is `root`.
    public static func verifyInclusion(
        leafIndex: Int64, treeSize: Int64, leafHash: MerkleTree.Hash, proof: [MerkleTree.Hash], root: MerkleTree.Hash
    ) throws {
        guard leafIndex >= 0, leafIndex < treeSize else { throw Failure("leaf index \(leafIndex) is not below tree size \(treeSize)") }
        try checkLengths(proof + [leafHash, root])
        var (fn, sn, r) = (leafIndex, treeSize - 1, leafHash)
        for p in proof {
            guard sn != 0 else { throw Failure("inclusion proof has \(proof.count) hashes, too many for tree size \(treeSize)") }
            if fn & 1 == 1 || fn == sn {
                r = MerkleTree.nodeHash(p, r)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                r = MerkleTree.nodeHash(r, p)
            }
            fn >>= 1
            sn >>= 1
        }
        guard sn == 0 else { throw Failure("inclusion proof has \(proof.count) hashes, too few for tree size \(treeSize)") }
        guard r == root else { throw Failure("inclusion proof does not lead to the root hash") }
    }

    /// Throws unless `proof` shows that the tree of `size1` leaves with root `root1` is a
    /// prefix of the tree of `size2` leaves with root `root2`.
    public static func verifyConsistency(
        size1: Int64, size2: Int64, root1: MerkleTree.Hash, root2: MerkleTree.Hash, proof: [MerkleTree.Hash]
    ) throws {
        guard size1 >= 0, size1 <= size2 else { throw Failure("tree size \(size1) is larger than \(size2)") }
        try checkLengths(proof + [root1, root2])
        if size1 == size2 {
            guard proof.isEmpty else { throw Failure("a consistency proof between equal sizes must be empty") }
            guard root1 == root2 else { throw Failure("different root hashes for the same tree size \(size1)") }
            return
        }
        if size1 == 0 {
            guard proof.isEmpty else { throw Failure("a consistency proof from the empty tree must be empty") }
            return
        }
        guard !proof.isEmpty else { throw Failure("empty consistency proof") }
        let path = size1.nonzeroBitCount == 1 ? [root1] + proof : proof
        var (fn, sn) = (size1 - 1, size2 - 1)
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var (fr, sr) = (path[0], path[0])
        for c in path.dropFirst() {
            guard sn != 0 else { throw Failure("consistency proof has too many hashes") }
            if fn & 1 == 1 || fn == sn {
                fr = MerkleTree.nodeHash(c, fr)
                sr = MerkleTree.nodeHash(c, sr)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                sr = MerkleTree.nodeHash(sr, c)
            }
            fn >>= 1
            sn >>= 1
        }
        guard sn == 0 else { throw Failure("consistency proof has too few hashes") }
        guard fr == root1 else { throw Failure("consistency proof does not lead to the first root hash (size \(size1))") }
        guard sr == root2 else { throw Failure("consistency proof does not lead to the second root hash (size \(size2))") }
    }

    private static func checkLengths(_ hashes: [MerkleTree.Hash]) throws {
        guard hashes.allSatisfy({ $0.count == 32 }) else { throw Failure("every hash must be 32 bytes") }
    }
}
