/// Where the prefix tree's nodes live, by position (`MemoryNodeStore` here; PostgreSQL later).
///
/// `PrefixTree` asks for the paths of a batch of keys in a few calls to `nodes(at:)` (one for
/// the first 16 levels, one per 8 more the longest paths run) and writes every node a batch changed in one call to `store(_:)`.
/// Positions are never emptied: once a node is at a position, one is there for good (a split
/// leaf's position holds a parent from then on), so a store needs no deletes.
///
/// The tree trusts its store no further than it checks: a leaf read at a position off its own
/// key's path, a parent at depth 256, or a position that was not asked for is refused
/// (`IndexCorruption`). A parent's hash is taken as stored; the index's roots are checked
/// against a rebuild from the log (`scripts/index-check`), not against the store.
public protocol IndexNodeStore: Sendable {
    /// The nodes at `positions`; a position with no node is left out of the answer.
    func nodes(at positions: Set<NodePosition>) async throws -> [NodePosition: IndexNode]

    /// Puts each node at its position, replacing what was there, all or none: a store that
    /// wrote some and failed would hold a tree no root describes.
    func store(_ nodes: [NodePosition: IndexNode]) async throws
}
