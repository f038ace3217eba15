/// A key of the verifiable index (docs/TRUST.md, "The verifiable index"): a collaboration, whose
/// value lists every event of its stream, or an identity's root hash, whose value lists every
/// event naming it in any collaboration. Never an account, a pseudonym, a handle or a name.
public enum IndexKey: Hashable, Sendable, CustomStringConvertible {
    /// The collaboration id as its stream id holds it (`collaboration-<id>`), byte for byte.
    case collaboration(String)
    /// An identity's 32-byte root hash.
    case identity(Hash256)

    /// Where the key sits in the tree (`IndexHashing.keyHash`).
    public var hash: Hash256 { IndexHashing.keyHash(self) }

    public var description: String {
        switch self {
        case .collaboration(let id): "collaboration \(id)"
        case .identity(let rootHash): "identity \(rootHash.base64)"
        }
    }
}
