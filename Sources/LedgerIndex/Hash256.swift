import TransparencyLog

/// A SHA-256 output as the index uses it: a key hash, a key's value, a node's hash. Exactly 32
/// bytes, so no count is checked again past its initializer.
public struct Hash256: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Nil unless `bytes` is exactly 32 bytes.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// For digests this target computes itself (always 32 bytes).
    init(digest: some Sequence<UInt8>) {
        let bytes = Array(digest)
        precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
        self.bytes = bytes
    }

    /// 32 zero bytes: the empty tree, an empty child, a chain before its first entry.
    public static let zero = Hash256(digest: [UInt8](repeating: 0, count: 32))

    /// Bit `index` (0 ..< 256), the most significant bit of the first byte first.
    public func bit(_ index: Int) -> UInt8 {
        precondition((0..<256).contains(index), "a bit of a 256-bit hash")
        return (bytes[index >> 3] >> (7 - UInt8(index & 7))) & 1
    }

    /// How many leading bits `self` and `other` share (256 when equal).
    public func commonPrefix(with other: Hash256) -> Int {
        for index in 0..<32 where bytes[index] != other.bytes[index] {
            return index * 8 + (bytes[index] ^ other.bytes[index]).leadingZeroBitCount
        }
        return 256
    }

    /// Ordered as 256-bit big-endian numbers, which is the tree's left-to-right order.
    public static func < (a: Hash256, b: Hash256) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    public var base64: String { Base64.encode(bytes) }
    public var description: String { base64 }
}
