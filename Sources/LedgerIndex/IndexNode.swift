/// A node of the prefix tree as a store keeps it: a leaf holds its key's hash and value (its own
/// hash is computed from them), a parent holds its hash. An empty position holds no node.
public enum IndexNode: Hashable, Sendable {
    case leaf(key: Hash256, value: Hash256)
    case parent(hash: Hash256)

    /// The node's hash as its parent hashes it (`IndexHashing.treeLeaf`, `.treeParent`).
    public var hash: Hash256 {
        switch self {
        case .leaf(let key, let value): IndexHashing.treeLeaf(key: key, value: value)
        case .parent(let hash): hash
        }
    }
}
