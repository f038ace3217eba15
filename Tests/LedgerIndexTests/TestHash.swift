import Crypto
import LedgerIndex

/// SHA-256 written out in the tests, and the index's hashes as docs/TRUST.md writes them (each
/// tag byte spelled here, not taken from `IndexHashing`), so the code is held to the text.
enum TestHash {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    static func leaf(_ key: Hash256, _ value: Hash256) -> Hash256 { Hash256(sha256([0x13] + key.bytes + value.bytes))! }

    static func parent(_ left: Hash256, _ right: Hash256) -> Hash256 { Hash256(sha256([0x14] + left.bytes + right.bytes))! }

    /// The root of `pairs` by the recursive definition: empty, one leaf, or a parent over the
    /// pairs whose bit `depth` is 0 and those whose bit is 1.
    static func root(_ pairs: [Hash256: Hash256]) -> Hash256 {
        node(pairs.map { ($0.key, $0.value) }, depth: 0)
    }

    static func node(_ pairs: [(Hash256, Hash256)], depth: Int) -> Hash256 {
        guard pairs.count > 1 else { return pairs.first.map { leaf($0.0, $0.1) } ?? .zero }
        return parent(
            node(pairs.filter { $0.0.bit(depth) == 0 }, depth: depth + 1), node(pairs.filter { $0.0.bit(depth) == 1 }, depth: depth + 1))
    }
}
