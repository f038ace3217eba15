/// The prefix tree's nodes in memory: for tests, and for rebuilding an index from a log
/// (`scripts/index-check` does it in Python) without a database.
public actor MemoryNodeStore: IndexNodeStore {
    private var nodes: [NodePosition: IndexNode] = [:]

    public init() {}

    public func nodes(at positions: Set<NodePosition>) -> [NodePosition: IndexNode] {
        var found: [NodePosition: IndexNode] = [:]
        for position in positions { found[position] = nodes[position] }
        return found
    }

    public func store(_ changed: [NodePosition: IndexNode]) {
        nodes.merge(changed) { _, new in new }
    }

    /// How many nodes the store holds.
    public var count: Int { nodes.count }

    /// Every node, for tests that tamper with the tree.
    public var all: [NodePosition: IndexNode] { nodes }

    /// Replaces the node at `position` as is, for tests of what the tree refuses.
    public func overwrite(_ position: NodePosition, with node: IndexNode) { nodes[position] = node }
}
