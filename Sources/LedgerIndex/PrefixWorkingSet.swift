/// The nodes on the paths of a batch of keys, read from a store, changed in memory, then
/// written back: the pure part of `PrefixTree`.
///
/// A position in `nodes` is known: a node, or `nil` for a known empty position. Every position
/// an operation reaches is known, by construction: the paths and their siblings are read for
/// every key of the batch down to where each path ends, and a split fills in every child of
/// the parents it makes (below a leaf there was nothing, so each child it does not fill is
/// empty). Reaching an unknown position is a bug, and refused (`IndexCorruption`).
struct PrefixWorkingSet {
    private(set) var nodes: [NodePosition: IndexNode?] = [:]
    /// Positions whose node changed: written back; the parents among them hashed again.
    private var changed = Set<NodePosition>()

    /// Where a key's path ends among the known positions.
    enum Walk: Equatable {
        /// At `depth`, on `node` (a leaf, or nil for an empty position).
        case ends(depth: Int, node: IndexNode?)
        /// At `depth`, a position not yet read: the path goes on past what was read.
        case unknown(depth: Int)
    }

    /// Records what a store answered for `asked`, refusing a node that cannot be there.
    mutating func absorb(_ answer: [NodePosition: IndexNode], asked: Set<NodePosition>) throws(IndexCorruption) {
        for (position, node) in answer {
            guard asked.contains(position) else { throw IndexCorruption(description: "the store answered \(position), not asked") }
            switch node {
            case .leaf(let key, _) where !position.isOnPath(of: key):
                throw IndexCorruption(description: "a leaf at \(position) off its key's path")
            case .parent where position.depth == NodePosition.maxDepth:
                throw IndexCorruption(description: "a parent at depth 256")
            default: break
            }
        }
        for position in asked where nodes[position] == nil { nodes.updateValue(answer[position], forKey: position) }
    }

    func walk(_ key: Hash256) -> Walk {
        var depth = 0
        while true {
            guard let known = nodes[NodePosition(key: key, depth: depth)] else { return .unknown(depth: depth) }
            guard case .parent? = known else { return .ends(depth: depth, node: known) }
            depth += 1
        }
    }

    /// The value of `key`, nil if absent.
    func value(of key: Hash256) throws(IndexCorruption) -> Hash256? {
        guard case .leaf(let found, let value)? = try end(of: key).node, found == key else { return nil }
        return value
    }

    /// Sets `key`'s value: replaces its leaf, puts a leaf on an empty position, or splits
    /// another key's leaf into the parents down to where the two keys' bits differ.
    mutating func set(_ key: Hash256, to value: Hash256) throws(IndexCorruption) {
        let (depth, node) = try end(of: key)
        for above in 0..<depth { changed.insert(NodePosition(key: key, depth: above)) }
        switch node {
        case .leaf(let other, let otherValue)? where other != key:
            let common = key.commonPrefix(with: other)  // < 256: the keys differ
            // A leaf is only read or put on its own key's path (`absorb`), which is this key's down to it.
            guard common >= depth else { throw IndexCorruption(description: "a leaf at depth \(depth) off the path it ends") }
            for level in depth...common {
                put(.parent(hash: .zero), at: NodePosition(key: key, depth: level))
                // Both keys go on down at every level above `common`: its other side is empty.
                if level < common { nodes.updateValue(nil, forKey: NodePosition(key: key, depth: level + 1).sibling) }
            }
            put(.leaf(key: key, value: value), at: NodePosition(key: key, depth: common + 1))
            put(.leaf(key: other, value: otherValue), at: NodePosition(key: other, depth: common + 1))
        default:
            put(.leaf(key: key, value: value), at: NodePosition(key: key, depth: depth))
        }
    }

    /// Hashes every changed parent again, deepest first, and answers the root.
    mutating func rehash() throws(IndexCorruption) -> Hash256 {
        let parents = changed.filter { position in
            if case .parent?? = nodes[position] { true } else { false }
        }
        for position in parents.sorted(by: { $0.depth > $1.depth }) {
            let hash = IndexHashing.treeParent(try hash(at: position.child(0)), try hash(at: position.child(1)))
            nodes.updateValue(.parent(hash: hash), forKey: position)
        }
        return try hash(at: .root)
    }

    /// The nodes to write back (after `rehash`).
    var changes: [NodePosition: IndexNode] {
        var out: [NodePosition: IndexNode] = [:]
        for position in changed { if case let node?? = nodes[position] { out[position] = node } }
        return out
    }

    /// The proof of `key`'s value or absence under the root these nodes make.
    func proof(for key: Hash256) throws(IndexCorruption) -> PrefixProof {
        let (depth, node) = try end(of: key)
        var siblings: [Hash256] = []
        for level in stride(from: 1, through: depth, by: 1) {
            siblings.append(try hash(at: NodePosition(key: key, depth: level).sibling))
        }
        let terminal: PrefixProof.Terminal =
            switch node {
            case .leaf(let other, let value)? where other == key: .found(value: value)
            case .leaf(let other, let value)?: .otherLeaf(key: other, value: value)
            case .parent?, nil: .empty  // `end(of:)` never ends on a parent
            }
        return PrefixProof(terminal: terminal, siblings: siblings)
    }

    /// Where `key`'s path ends: a leaf, or nil for an empty position.
    private func end(of key: Hash256) throws(IndexCorruption) -> (depth: Int, node: IndexNode?) {
        guard case .ends(let depth, let node) = walk(key) else {
            throw IndexCorruption(description: "the path of \(key) runs past what was read")
        }
        return (depth, node)
    }

    private func hash(at position: NodePosition) throws(IndexCorruption) -> Hash256 {
        guard let known = nodes[position] else { throw IndexCorruption(description: "\(position) was not read") }
        return known?.hash ?? .zero
    }

    private mutating func put(_ node: IndexNode, at position: NodePosition) {
        nodes.updateValue(node, forKey: position)
        changed.insert(position)
    }
}
