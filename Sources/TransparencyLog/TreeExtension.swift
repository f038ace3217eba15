/// Whether a tree extends an earlier checkpoint: what a log checks before it signs, against each
/// checkpoint it must never contradict. Decided by the RFC 9162 §2.1.4.2 verifier
/// (`MerkleProof.verifyConsistency`) on a proof from the earlier size to the new one, checked
/// against both roots: the earlier checkpoint's and the one about to be signed. A store that
/// holds other leaves, or other nodes, than the earlier tree had gives a proof that fails.
public enum TreeExtension {
    public enum Verdict: Equatable, Sendable {
        /// The new tree extends the earlier one.
        case extends
        /// The new tree is smaller: the earlier tree's leaves at these 1-based positions (the
        /// events `p`, leaf `p − 1`) are missing from it.
        case shorter(missing: ClosedRange<Int64>)
        /// The proof does not lead from the earlier root to the new one: the new tree's first
        /// leaves differ from the earlier tree's (or the store gave a wrong proof). The verifier's
        /// reason.
        case differs(String)
    }

    /// The verdict on the tree of `size` leaves with `root` against the earlier tree of
    /// `earlierSize` leaves with `earlierRoot`. `proof` is the consistency proof from
    /// `earlierSize` to `size` (empty when they are equal or `earlierSize` is 0); it is not
    /// read when the new tree is smaller.
    public static func check(
        earlierSize: Int64, earlierRoot: MerkleTree.Hash, size: Int64, root: MerkleTree.Hash, proof: [MerkleTree.Hash]
    ) -> Verdict {
        guard earlierSize >= 0, size >= 0 else { return .differs("a tree size is negative") }
        guard size >= earlierSize else { return .shorter(missing: (size + 1)...earlierSize) }
        if earlierSize == 0, earlierRoot != MerkleTree.emptyRoot { return .differs("the empty tree has another root") }
        do {
            try MerkleProof.verifyConsistency(size1: earlierSize, size2: size, root1: earlierRoot, root2: root, proof: proof)
            return .extends
        } catch {
            return .differs("\(error)")
        }
    }
}
