/// Where a node of the prefix tree sits: its depth (the root is at 0) and the first `depth` bits
/// every key beneath it shares. A key's path is the positions `(d, its first d bits)` for
/// d = 0, 1, …, so a store finds a path from the key alone, without following pointers.
///
/// Kept as four 64-bit words, not bytes: a fold makes, hashes and compares tens of thousands of
/// positions a batch, and words need no allocation (`ledger-bench index`, "in memory").
public struct NodePosition: Hashable, Sendable, CustomStringConvertible {
    /// 0 ... 256: a leaf can sit at 256 (two keys differing in their last bit), a parent at 255.
    public let depth: Int
    /// The bits, most significant first, as `Hash256.words` holds a key; every bit past `depth` zero.
    private let words: Hash256.Words

    public static let maxDepth = 256
    /// The root's position.
    public static let root = NodePosition(unchecked: 0, (0, 0, 0, 0))

    /// Nil unless `depth` is in 0 ... 256 and `prefix` is its bytes with no bit set past it
    /// (a position as a store reads it back).
    public init?(depth: Int, prefix: [UInt8]) {
        guard (0...Self.maxDepth).contains(depth), prefix.count == (depth + 7) / 8 else { return nil }
        if depth % 8 != 0, let last = prefix.last, last & (0xFF >> UInt8(depth % 8)) != 0 { return nil }
        self.init(unchecked: depth, Hash256.words(prefix + [UInt8](repeating: 0, count: 32 - prefix.count)))
    }

    /// The node at `depth` on `key`'s path.
    public init(key: Hash256, depth: Int) {
        precondition((0...Self.maxDepth).contains(depth), "a depth of the tree")
        let (w0, w1, w2, w3) = key.words
        self.init(
            unchecked: depth,
            (w0 & Self.mask(depth, word: 0), w1 & Self.mask(depth, word: 1), w2 & Self.mask(depth, word: 2), w3 & Self.mask(depth, word: 3))
        )
    }

    private init(unchecked depth: Int, _ words: Hash256.Words) {
        self.depth = depth
        self.words = words
    }

    /// `(depth + 7) / 8` bytes, the bits past `depth` zero: how a store keeps the position.
    public var prefix: [UInt8] {
        Array(Hash256.bytes(words).prefix((depth + 7) / 8))
    }

    /// The other child of this node's parent (for depth ≥ 1): the same bits, the last flipped.
    public var sibling: NodePosition {
        precondition(depth >= 1, "the root has no sibling")
        return NodePosition(unchecked: depth, Self.toggling(bit: depth - 1, in: words))
    }

    /// This node's child on the side `bit` (0 left, 1 right); depth must be below 256.
    public func child(_ bit: UInt8) -> NodePosition {
        precondition(depth < Self.maxDepth && bit <= 1, "a parent's child")
        return NodePosition(unchecked: depth + 1, bit == 0 ? words : Self.toggling(bit: depth, in: words))
    }

    /// Whether `key`'s path passes through this position.
    public func isOnPath(of key: Hash256) -> Bool { self == NodePosition(key: key, depth: depth) }

    public static func == (a: NodePosition, b: NodePosition) -> Bool {
        a.depth == b.depth && a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(depth)
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    public var description: String {
        var bits = ""
        let bytes = Hash256.bytes(words)
        for index in 0..<depth {
            bits += bytes[index >> 3] & (0x80 >> UInt8(index & 7)) == 0 ? "0" : "1"
        }
        return "depth \(depth) [\(bits)]"
    }

    /// The bits of word `word` (0 ... 3) among the first `depth` bits of 256.
    private static func mask(_ depth: Int, word: Int) -> UInt64 {
        let bits = min(max(depth - 64 * word, 0), 64)
        return bits == 0 ? 0 : ~0 << UInt64(64 - bits)
    }

    /// `words` with bit `index` (0 ..< 256, most significant first) flipped.
    private static func toggling(bit index: Int, in words: Hash256.Words) -> Hash256.Words {
        var w = words
        let flip = UInt64(1) << UInt64(63 - (index & 63))
        switch index >> 6 {
        case 0: w.0 ^= flip
        case 1: w.1 ^= flip
        case 2: w.2 ^= flip
        default: w.3 ^= flip
        }
        return w
    }
}
