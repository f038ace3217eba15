import Crypto

/// The log's Merkle tree: RFC 9162 §2.1.1 hashing over the events' canonical bytes, and the
/// leaf ranges whose hashes make up inclusion (§2.1.3.1) and consistency (§2.1.4.1) proofs.
///
/// Leaf `p − 1` is the event at position `p`. Every hash a proof needs is the hash of a leaf
/// range the RFC's recursion names; each such range is a run of full, aligned subtrees
/// (`Node`), which is what the store keeps, so a proof costs one lookup of O(log n) nodes.
public enum MerkleTree {
    public typealias Hash = [UInt8]

    /// The root of the empty tree: SHA-256 of the empty string.
    public static let emptyRoot: Hash = Array(SHA256.hash(data: [UInt8]()))

    /// `SHA256(0x00 || leaf)`.
    public static func leafHash(_ leaf: [UInt8]) -> Hash {
        var hasher = SHA256()
        hasher.update(data: [0x00])
        hasher.update(data: leaf)
        return Array(hasher.finalize())
    }

    /// `SHA256(0x01 || left || right)`.
    public static func nodeHash(_ left: Hash, _ right: Hash) -> Hash {
        var hasher = SHA256()
        hasher.update(data: [0x01])
        hasher.update(data: left)
        hasher.update(data: right)
        return Array(hasher.finalize())
    }

    /// A full, aligned subtree: the leaves `index << level ..< (index + 1) << level`.
    public struct Node: Hashable, Sendable, CustomStringConvertible {
        public var level: Int
        public var index: Int64
        public init(level: Int, index: Int64) {
            self.level = level
            self.index = index
        }
        public var leaves: Range<Int64> { (index << level)..<((index + 1) << level) }
        public var description: String { "(\(level), \(index))" }
    }

    /// The full subtrees that make up `range`, left to right, largest first. The ranges the
    /// RFC's recursion names start at a multiple of their largest part, so this is exact.
    public static func nodes(covering range: Range<Int64>) -> [Node] {
        var nodes: [Node] = []
        var start = range.lowerBound
        while start < range.upperBound {
            var level = 0
            while start % (Int64(2) << level) == 0 && start + (Int64(2) << level) <= range.upperBound { level += 1 }
            nodes.append(Node(level: level, index: start >> level))
            start += Int64(1) << level
        }
        return nodes
    }

    /// The hash of the leaves in `range`, from the hashes of `nodes(covering: range)`; nil if
    /// `node` lacks one. The RFC's tree puts the largest power of two on the left, so the
    /// parts fold from the right.
    public static func hash(of range: Range<Int64>, node: (Node) -> Hash?) -> Hash? {
        if range.isEmpty { return emptyRoot }
        var hash: Hash?
        for part in nodes(covering: range).reversed() {
            guard let h = node(part) else { return nil }
            hash = hash.map { nodeHash(h, $0) } ?? h
        }
        return hash
    }

    /// MTH(D[n]) of RFC 9162 §2.1.1, computed directly from the leaf hashes.
    public static func root(leafHashes: ArraySlice<Hash>) -> Hash {
        switch leafHashes.count {
        case 0: return emptyRoot
        case 1: return leafHashes.first!
        default:
            let k = leafHashes.startIndex + Int(largestPowerOfTwo(below: Int64(leafHashes.count)))
            return nodeHash(root(leafHashes: leafHashes[..<k]), root(leafHashes: leafHashes[k...]))
        }
    }

    /// PATH(m, D[n]) of RFC 9162 §2.1.3.1 as the leaf ranges whose hashes it lists, in order.
    /// Requires `0 <= leaf < size`.
    public static func inclusionRanges(leaf: Int64, size: Int64) -> [Range<Int64>] {
        func path(_ lo: Int64, _ hi: Int64) -> [Range<Int64>] {
            if hi - lo <= 1 { return [] }
            let k = largestPowerOfTwo(below: hi - lo)
            return leaf - lo < k ? path(lo, lo + k) + [(lo + k)..<hi] : path(lo + k, hi) + [lo..<(lo + k)]
        }
        return path(0, size)
    }

    /// PROOF(m, D[n]) of RFC 9162 §2.1.4.1 as leaf ranges, in order; empty when `from` is 0
    /// or equals `to`. Requires `0 <= from <= to`.
    public static func consistencyRanges(from: Int64, to: Int64) -> [Range<Int64>] {
        func subproof(_ m: Int64, _ lo: Int64, _ hi: Int64, _ complete: Bool) -> [Range<Int64>] {
            if lo + m == hi { return complete ? [] : [lo..<hi] }
            let k = largestPowerOfTwo(below: hi - lo)
            return m <= k
                ? subproof(m, lo, lo + k, complete) + [(lo + k)..<hi]
                : subproof(m - k, lo + k, hi, false) + [lo..<(lo + k)]
        }
        return from == 0 || from == to ? [] : subproof(from, 0, to, true)
    }

    /// The largest power of two strictly below `n` (n > 1): the RFC's split point `k`.
    static func largestPowerOfTwo(below n: Int64) -> Int64 {
        Int64(1) << (63 - (n - 1).leadingZeroBitCount)
    }
}
