/// Integrating new leaves into a log's Merkle tree, with no I/O (Tessera's `Integrate`): from
/// the tree's right edge and the next leaves' hashes, the new right edge and every node above
/// the leaves that they complete. Growing a tree of n leaves one batch at a time gives the
/// same nodes, at the same (level, index), and the same root, however the leaves are batched.
///
/// The caller reads the right edge from its store (`MerkleFrontier.nodes(size:)`), stores
/// the nodes returned and signs the root; the leaves themselves (level 0) are not returned:
/// the caller has them.
public enum MerkleIntegration {
    /// What a batch of leaves gives: the tree after it, and the nodes it completed.
    public struct Result: Sendable, Equatable {
        /// The tree's right edge after the batch: its size, and the hashes its root folds.
        public var frontier: MerkleFrontier
        /// The full subtrees of levels 1 and up the batch completed, in the order completed
        /// (leaf by leaf, each node before its parent).
        public var nodes: [MerkleTree.Node]
        /// The hash of each of `nodes`, at the same index.
        public var hashes: [MerkleTree.Hash]

        /// The root of the tree after the batch (RFC 9162 MTH).
        public var root: MerkleTree.Hash { frontier.root }
    }

    /// Appends `leafHashes` (`MerkleTree.leafHash` of each leaf, in order) to the tree whose
    /// right edge is `frontier`.
    public static func integrate(_ frontier: MerkleFrontier, leafHashes: some Sequence<MerkleTree.Hash>) -> Result {
        var result = Result(frontier: frontier, nodes: [], hashes: [])
        // A batch of n leaves completes about n nodes above them.
        result.nodes.reserveCapacity(leafHashes.underestimatedCount)
        result.hashes.reserveCapacity(leafHashes.underestimatedCount)
        for leaf in leafHashes {
            for (node, hash) in result.frontier.append(leafHash: leaf) where node.level > 0 {
                result.nodes.append(node)
                result.hashes.append(hash)
            }
        }
        return result
    }
}
