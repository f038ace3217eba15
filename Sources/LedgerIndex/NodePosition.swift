/// Where a node of the prefix tree sits: its depth (the root is at 0) and the first `depth` bits
/// every key beneath it shares. A key's path is the positions `(d, its first d bits)` for
/// d = 0, 1, …, so a store finds a path from the key alone, without following pointers.
public struct NodePosition: Hashable, Sendable, CustomStringConvertible {
    /// 0 ... 256: a leaf can sit at 256 (two keys differing in their last bit), a parent at 255.
    public let depth: Int
    /// `(depth + 7) / 8` bytes, the bits past `depth` zero: how a store keeps the position.
    public let prefix: [UInt8]

    public static let maxDepth = 256
    /// The root's position.
    public static let root = NodePosition(unchecked: 0, [])

    /// Nil unless `depth` is in 0 ... 256 and `prefix` is its bytes with no bit set past it
    /// (a position as a store reads it back).
    public init?(depth: Int, prefix: [UInt8]) {
        guard (0...Self.maxDepth).contains(depth), prefix.count == (depth + 7) / 8 else { return nil }
        if depth % 8 != 0, let last = prefix.last, last & (0xFF >> UInt8(depth % 8)) != 0 { return nil }
        self.init(unchecked: depth, prefix)
    }

    /// The node at `depth` on `key`'s path.
    public init(key: Hash256, depth: Int) {
        precondition((0...Self.maxDepth).contains(depth), "a depth of the tree")
        var prefix = Array(key.bytes.prefix((depth + 7) / 8))
        if depth % 8 != 0 { prefix[prefix.count - 1] &= ~(0xFF >> UInt8(depth % 8)) }
        self.init(unchecked: depth, prefix)
    }

    private init(unchecked depth: Int, _ prefix: [UInt8]) {
        self.depth = depth
        self.prefix = prefix
    }

    /// The other child of this node's parent (for depth ≥ 1): the same bits, the last flipped.
    public var sibling: NodePosition {
        precondition(depth >= 1, "the root has no sibling")
        var flipped = prefix
        flipped[(depth - 1) >> 3] ^= 0x80 >> UInt8((depth - 1) & 7)
        return NodePosition(unchecked: depth, flipped)
    }

    /// This node's child on the side `bit` (0 left, 1 right); depth must be below 256.
    public func child(_ bit: UInt8) -> NodePosition {
        precondition(depth < Self.maxDepth && bit <= 1, "a parent's child")
        var bytes = prefix
        if depth % 8 == 0 { bytes.append(0) }
        bytes[depth >> 3] |= bit << (7 - UInt8(depth & 7))
        return NodePosition(unchecked: depth + 1, bytes)
    }

    /// Whether `key`'s path passes through this position.
    public func isOnPath(of key: Hash256) -> Bool { self == NodePosition(key: key, depth: depth) }

    public var description: String {
        var bits = ""
        for index in 0..<depth {
            let byte = prefix[index >> 3]
            bits += byte & (0x80 >> UInt8(index & 7)) == 0 ? "0" : "1"
        }
        return "depth \(depth) [\(bits)]"
    }
}
