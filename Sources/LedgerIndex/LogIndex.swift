import TransparencyLog

/// The verifiable index of one log: the map function (`IndexMap`) and the value chains
/// (`IndexValue`) folded into a prefix tree (`PrefixTree`), a batch of leaves at a time.
///
/// It does not keep how much of the log it covers: the caller appends the leaves at positions
/// N + 1, N + 2, … after covering 1 … N, and keeps N beside the nodes (on PostgreSQL in the
/// same transaction as `store(_:)`), or the tree and its N part ways.
public struct LogIndex<Store: IndexNodeStore>: Sendable {
    public struct Refused: Error, Hashable, CustomStringConvertible {
        public var description: String
    }

    public let tree: PrefixTree<Store>

    public init(store: Store) { tree = PrefixTree(store: store) }

    /// What `fold` did: the root after it, and each key's new entries in log order (the
    /// positions a lookup lists, which a store keeps beside the nodes).
    public struct Folded: Sendable {
        public let root: Hash256
        public let entries: [Hash256: [IndexValue.Entry]]
    }

    /// Folds `leaves`, the log's leaves at positions `first`, `first + 1`, …, into the index and
    /// answers its root then. Each key a leaf yields has its value extended by (position, the
    /// leaf's hash), in log order.
    public func append(_ leaves: some Collection<[UInt8]>, from first: Int64) async throws -> Hash256 {
        try await fold(leaves, from: first).root
    }

    /// `append`, answering the entries it added too.
    public func fold(_ leaves: some Collection<[UInt8]>, from first: Int64) async throws -> Folded {
        guard first >= 1 else { throw Refused(description: "positions start at 1, not \(first)") }
        guard Int64(leaves.count) - 1 <= Int64.max - first else {
            throw Refused(description: "\(leaves.count) leaves from position \(first) run past the largest position")
        }
        var entries: [Hash256: [IndexValue.Entry]] = [:]
        for (offset, leaf) in leaves.enumerated() {
            let keys = IndexMap.keys(leaf: leaf)
            guard !keys.isEmpty else { continue }
            // In range: checked above. A SHA-256 digest is 32 bytes.
            let entry = IndexValue.Entry(position: first + Int64(offset), leafHash: Hash256(digest: MerkleTree.leafHash(leaf)))!
            for key in keys { entries[key.hash, default: []].append(entry) }
        }
        guard !entries.isEmpty else { return Folded(root: try await tree.root(), entries: [:]) }
        let root = try await tree.update(entries.keys) { key, current in
            IndexValue.extend(current ?? .zero, with: entries[key] ?? [])
        }
        return Folded(root: root, entries: entries)
    }
}
