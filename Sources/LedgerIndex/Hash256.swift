import TransparencyLog

/// A SHA-256 output as the index uses it: a key hash, a key's value, a node's hash. Exactly 32
/// bytes, so no count is checked again past its initializer.
///
/// Equal and hashed by its four 64-bit words, read once at its initializer: hashing 32 bytes
/// one by one was a fold's largest cost after allocation (`ledger-bench index`, "in memory").
public struct Hash256: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Four big-endian 64-bit words: bits 0 ... 63 (the first byte's most significant first) in `.0`.
    typealias Words = (UInt64, UInt64, UInt64, UInt64)

    public let bytes: [UInt8]
    /// `bytes` as four words.
    let words: Words

    /// Nil unless `bytes` is exactly 32 bytes.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        (self.bytes, words) = (bytes, Self.words(bytes))
    }

    /// For digests this target computes itself (always 32 bytes).
    init(digest: some Sequence<UInt8>) {
        let bytes = Array(digest)
        precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
        (self.bytes, words) = (bytes, Self.words(bytes))
    }

    /// 32 zero bytes: the empty tree, an empty child, a chain before its first entry.
    public static let zero = Hash256(digest: [UInt8](repeating: 0, count: 32))

    /// The words of 32 bytes.
    static func words(_ bytes: [UInt8]) -> Words {
        precondition(bytes.count == 32, "32 bytes")
        func word(_ at: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in at..<at + 8 { value = value << 8 | UInt64(bytes[index]) }
            return value
        }
        return (word(0), word(8), word(16), word(24))
    }

    /// The 32 bytes of four words.
    static func bytes(_ words: Words) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for word in [words.0, words.1, words.2, words.3] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return bytes
    }

    public static func == (a: Hash256, b: Hash256) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    /// Bit `index` (0 ..< 256), the most significant bit of the first byte first.
    public func bit(_ index: Int) -> UInt8 {
        precondition((0..<256).contains(index), "a bit of a 256-bit hash")
        return (bytes[index >> 3] >> (7 - UInt8(index & 7))) & 1
    }

    /// How many leading bits `self` and `other` share (256 when equal).
    public func commonPrefix(with other: Hash256) -> Int {
        if words.0 != other.words.0 { return (words.0 ^ other.words.0).leadingZeroBitCount }
        if words.1 != other.words.1 { return 64 + (words.1 ^ other.words.1).leadingZeroBitCount }
        if words.2 != other.words.2 { return 128 + (words.2 ^ other.words.2).leadingZeroBitCount }
        if words.3 != other.words.3 { return 192 + (words.3 ^ other.words.3).leadingZeroBitCount }
        return 256
    }

    /// Ordered as 256-bit big-endian numbers, which is the tree's left-to-right order.
    public static func < (a: Hash256, b: Hash256) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    public var base64: String { Base64.encode(bytes) }
    public var description: String { base64 }
}
