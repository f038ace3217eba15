import Foundation
import NIOCore
import Synchronization
import TransparencyLog

/// The log's tiles (C2SP `tlog-tiles`) as far as the latest published checkpoint reaches: hash
/// tiles from the stored tree (level 0 from the events' leaf hashes, level L from the stored
/// nodes of level 8L) and entry bundles from the events' leaves. A tile past the published
/// tree is nil (a 404), so no one learns of a tree the witnesses have not cosigned.
///
/// A full tile never changes: it is kept in memory after its first read, up to `budget` bytes
/// (the oldest go first). Partial tiles are read every time.
public final class TileStore: Sendable {
    let tree: LogTree
    let latest: LatestCheckpoint
    let budget: Int
    private let cache = Mutex<(tiles: [Tile: ByteBuffer], order: [Tile], bytes: Int)>(([:], [], 0))

    public init(tree: LogTree, latest: LatestCheckpoint, budget: Int = 64 << 20) {
        self.tree = tree
        self.latest = latest
        self.budget = budget
    }

    /// The tile's bytes, or nil when the published tree does not reach that far. A kept tile is
    /// answered without a copy (a `ByteBuffer` shares its storage).
    public func read(_ tile: Tile) async throws -> ByteBuffer? {
        if tile.isFull, let kept = cache.withLock({ $0.tiles[tile] }) { return kept }
        guard let published = try await latest.get(),
            tile.width <= Tile.width(level: tile.level, index: tile.index, treeSize: published.size)
        else { return nil }
        let first = tile.index * Int64(Tile.fullWidth)
        let bytes: [UInt8]
        switch tile.level {
        case nil:
            let leaves = try await tree.store.leaves(after: first, through: first + Int64(tile.width))
            guard leaves.allSatisfy({ $0.count <= Int(UInt16.max) }) else {
                throw CheckpointError("an event in entry bundle \(tile.index) is over 65,535 bytes (appended before the limit)")
            }
            bytes = Tile.bundle(leaves)
        case 0:
            bytes = try await tree.leafHashesFromEvents(after: first, through: first + Int64(tile.width)).flatMap { $0 }
        case let level?:
            let nodes = try await tree.storedNodes(level: level * Tile.height, from: first, count: tile.width)
            guard nodes.allSatisfy({ $0 != nil }) else {
                throw CheckpointError("the stored tree lacks nodes of tile \(tile.path) below the published size")
            }
            bytes = nodes.flatMap { $0! }
        }
        let buffer = ByteBuffer(bytes: bytes)
        if tile.isFull { keep(tile, buffer) }
        return buffer
    }

    private func keep(_ tile: Tile, _ bytes: ByteBuffer) {
        cache.withLock { cache in
            guard cache.tiles[tile] == nil, bytes.readableBytes <= budget else { return }
            cache.tiles[tile] = bytes
            cache.order.append(tile)
            cache.bytes += bytes.readableBytes
            while cache.bytes > budget, !cache.order.isEmpty {
                let oldest = cache.order.removeFirst()
                cache.bytes -= cache.tiles.removeValue(forKey: oldest)?.readableBytes ?? 0
            }
        }
    }
}
