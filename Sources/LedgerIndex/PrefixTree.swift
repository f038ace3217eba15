/// The verifiable index's map: a binary Merkle prefix tree over key hashes, its nodes in an
/// `IndexNodeStore` (docs/TRUST.md, "The verifiable index", defines the tree and its root).
///
/// A leaf sits at the first depth where its subtree holds no other key, as in the IETF Key
/// Transparency draft's prefix tree; every node's position follows from a key's bits, so a
/// batch reads its keys' paths by position (`nodes(at:)`, one call for the first 16 levels of
/// every path, then one per 8 more levels the longest paths run) and writes what it changed in
/// one `store(_:)`. A key set
/// changes its leaf and the parents on its path: O(log n) nodes.
///
/// One writer at a time: `update` reads, decides and writes without a lock of its own (on
/// PostgreSQL, the transaction that records the revision is that lock).
public struct PrefixTree<Store: IndexNodeStore>: Sendable {
    public let store: Store

    /// How many levels of every path the first read asks for, and each later read of the paths
    /// still pending. A key's path ends near depth log2(keys) + 1 (17 for 65,000 keys, 22 for
    /// two million), and each level asked past its end is a lookup that finds nothing: a first
    /// window of 32 asked about four times the positions a 100,000-event log needs; with 16 and
    /// 8, a path that ends in the first window is asked at most 15 levels past its end, and one
    /// that ends further down at most 7 (`ledger-bench index`).
    static var firstLevels: Int { 16 }
    static var laterLevels: Int { 8 }

    public init(store: Store) { self.store = store }

    /// The root: the hash of the node at depth 0, `Hash256.zero` for the empty tree.
    public func root() async throws -> Hash256 {
        try await store.nodes(at: [.root])[.root]?.hash ?? .zero
    }

    /// The value of `key`, nil if the tree does not hold it.
    public func value(of key: Hash256) async throws -> Hash256? {
        try await read([key]).value(of: key)
    }

    /// The proof of `key`'s value, or of its absence, under `root()`.
    public func proof(for key: Hash256) async throws -> PrefixProof {
        try await read([key]).proof(for: key)
    }

    /// Sets the value of each of `keys` to `change(key, its value or nil)`, writes the changed
    /// nodes in one `store(_:)` and answers the new root.
    public func update(
        _ keys: some Collection<Hash256>, _ change: (Hash256, Hash256?) throws -> Hash256
    ) async throws -> Hash256 {
        let unique = Array(Set(keys))
        guard !unique.isEmpty else { return try await root() }
        var working = try await read(unique)
        for key in unique {
            try working.set(key, to: try change(key, try working.value(of: key)))
        }
        let root = try working.rehash()
        let changes = working.changes
        if !changes.isEmpty { try await store.store(changes) }
        return root
    }

    /// The paths of `keys` and their siblings, read level by level in windows until each ends.
    func read(_ keys: [Hash256]) async throws -> PrefixWorkingSet {
        var working = PrefixWorkingSet()
        var pending = keys
        var from = 0
        while !pending.isEmpty {
            guard from <= NodePosition.maxDepth else { throw IndexCorruption(description: "a path below depth 256") }
            let to = min(from + (from == 0 ? Self.firstLevels : Self.laterLevels), NodePosition.maxDepth + 1)
            var asked = Set<NodePosition>()
            for key in pending {
                for depth in from..<to {
                    let position = NodePosition(key: key, depth: depth)
                    asked.insert(position)
                    if depth > 0 { asked.insert(position.sibling) }
                }
            }
            try working.absorb(try await store.nodes(at: asked), asked: asked)
            pending = pending.filter { key in
                if case .unknown = working.walk(key) { true } else { false }
            }
            from = to
        }
        return working
    }
}
