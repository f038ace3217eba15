import TransparencyLog

/// A key of the verifiable index (docs/TRUST.md, "The verifiable index"): a collaboration, whose
/// value lists every event of its stream, or an identity's root hash, whose value lists every
/// event naming it in any collaboration. Never an account, a pseudonym, a handle or a name.
///
/// Two keys are equal exactly when their hashes are: a collaboration id is compared as its UTF-8
/// bytes, as `IndexHashing.keyHash` hashes it, never by Unicode canonical equivalence as
/// `String`'s `==` compares (an id written with "é" and one written with "e" and U+0301 are two
/// streams, so two keys). Compare the ids of two keys as `IndexKey`s, not as `String`s.
public enum IndexKey: Hashable, Sendable, CustomStringConvertible {
    /// The collaboration id as its stream id holds it (`collaboration-<id>`), byte for byte.
    case collaboration(String)
    /// An identity's 32-byte root hash.
    case identity(Hash256)

    /// The identity key of a root hash written as the canonical base64 of 32 bytes (standard,
    /// padded, decoding to bytes that encode back to the same text); nil for any other text.
    public static func identity(base64 text: String) -> IndexKey? {
        guard let bytes = Base64.decode(text), let root = Hash256(bytes), root.base64 == text else { return nil }
        return .identity(root)
    }

    /// Where the key sits in the tree (`IndexHashing.keyHash`).
    public var hash: Hash256 { IndexHashing.keyHash(self) }

    public static func == (a: IndexKey, b: IndexKey) -> Bool {
        switch (a, b) {
        case (.collaboration(let x), .collaboration(let y)): x.utf8.elementsEqual(y.utf8)
        case (.identity(let x), .identity(let y)): x == y
        case (.collaboration, .identity), (.identity, .collaboration): false
        }
    }

    /// Over the bytes `==` compares, so equal keys hash alike.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .collaboration(let id):
            hasher.combine(0 as UInt8)
            hasher.combine(Array(id.utf8))
        case .identity(let rootHash):
            hasher.combine(1 as UInt8)
            hasher.combine(rootHash)
        }
    }

    public var description: String {
        switch self {
        case .collaboration(let id): "collaboration \(id)"
        case .identity(let rootHash): "identity \(rootHash.base64)"
        }
    }
}
