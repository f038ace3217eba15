/// The right edge of a growing Merkle tree: the hashes of the full subtrees that make up
/// leaves `0 ..< size` (one per set bit of `size`, largest first). Appending a leaf completes
/// the nodes the store keeps; the root of any size is a fold of the frontier.
public struct MerkleFrontier: Sendable, Equatable {
    public private(set) var size: Int64 = 0
    public private(set) var hashes: [MerkleTree.Hash] = []

    public init() {}

    /// The frontier of a tree of `size` leaves, given the hashes of `nodes(size:)` in order.
    public init(size: Int64, hashes: [MerkleTree.Hash]) throws {
        guard hashes.count == size.nonzeroBitCount else {
            throw NoteError("a frontier of size \(size) has \(size.nonzeroBitCount) hashes, got \(hashes.count)")
        }
        self.size = size
        self.hashes = hashes
    }

    /// The nodes a frontier of `size` leaves holds, largest first.
    public static func nodes(size: Int64) -> [MerkleTree.Node] { MerkleTree.nodes(covering: 0..<size) }

    /// Adds the next leaf; returns the nodes it completes, the leaf first, then each parent.
    public mutating func append(leafHash: MerkleTree.Hash) -> [(node: MerkleTree.Node, hash: MerkleTree.Hash)] {
        var node = MerkleTree.Node(level: 0, index: size)
        var hash = leafHash
        var completed = [(node, hash)]
        while node.index & 1 == 1 {
            hash = MerkleTree.nodeHash(hashes.removeLast(), hash)
            node = MerkleTree.Node(level: node.level + 1, index: node.index >> 1)
            completed.append((node, hash))
        }
        hashes.append(hash)
        size += 1
        return completed
    }

    /// The tree's root hash (the empty root for size 0).
    public var root: MerkleTree.Hash {
        guard var hash = hashes.last else { return MerkleTree.emptyRoot }
        for left in hashes.dropLast().reversed() { hash = MerkleTree.nodeHash(left, hash) }
        return hash
    }
}
