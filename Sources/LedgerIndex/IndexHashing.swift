import Crypto

/// Every hash of the verifiable index (docs/TRUST.md, "The verifiable index"): SHA-256, each
/// input opening with its own tag byte, none of them the log tree's 0x00 (leaf) or 0x01 (node),
/// so no index hash can be passed off as another kind of index hash or as a log hash.
public enum IndexHashing {
    /// The tag bytes, written here once.
    enum Tag: UInt8 {
        case collaborationKey = 0x10
        case identityKey = 0x11
        case valueStep = 0x12
        case treeLeaf = 0x13
        case treeParent = 0x14
    }

    static func hash(_ tag: Tag, _ parts: [UInt8]...) -> Hash256 {
        var hasher = SHA256()
        hasher.update(data: [tag.rawValue])
        for part in parts { hasher.update(data: part) }
        return Hash256(digest: hasher.finalize())
    }

    /// A key's hash: `SHA256(0x10 || UTF-8 of the collaboration id)` or
    /// `SHA256(0x11 || the identity's 32-byte root hash)`.
    public static func keyHash(_ key: IndexKey) -> Hash256 {
        switch key {
        case .collaboration(let id): hash(.collaborationKey, Array(id.utf8))
        case .identity(let rootHash): hash(.identityKey, rootHash.bytes)
        }
    }

    /// One step of a key's value chain: `SHA256(0x12 || previous || u64be(position) ||
    /// leafHash)`, where `leafHash` is the log's own leaf hash of the event's leaf,
    /// `SHA256(0x00 || leaf)`. Reached through `IndexValue.Entry`, whose position is checked.
    static func valueStep(_ previous: Hash256, position: Int64, leafHash: Hash256) -> Hash256 {
        precondition(position >= 1, "positions start at 1")
        let big = withUnsafeBytes(of: UInt64(position).bigEndian) { Array($0) }
        return hash(.valueStep, previous.bytes, big, leafHash.bytes)
    }

    /// A tree leaf: `SHA256(0x13 || keyHash || value)`.
    public static func treeLeaf(key: Hash256, value: Hash256) -> Hash256 {
        hash(.treeLeaf, key.bytes, value.bytes)
    }

    /// A tree parent: `SHA256(0x14 || left || right)`, an empty child being `Hash256.zero`.
    public static func treeParent(_ left: Hash256, _ right: Hash256) -> Hash256 {
        hash(.treeParent, left.bytes, right.bytes)
    }
}
