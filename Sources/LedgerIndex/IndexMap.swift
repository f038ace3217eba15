import LedgerDomain
import TransparencyLog

/// The map function: the keys a leaf of the log yields (docs/TRUST.md, "The verifiable index",
/// where it is specified for anyone to reimplement; `scripts/index-check` does, in Python).
///
/// A function of the leaf's bytes alone, so anyone holding the leaves rebuilds the index. It
/// reads the stream id and, in a collaboration's events, the data's top-level `rootHash` and
/// `mentionedRootHash`; none of those is ever a personal value (`PersonalData.accountFields`,
/// `PersonalData.valueFields`), and an erasure changes no leaf, so it changes no index.
public enum IndexMap {
    /// The members of an event's data that name an identity, read in any event of a
    /// collaboration's stream whatever its type.
    public static let identityMembers = ["rootHash", "mentionedRootHash"]

    /// The keys of the leaf `leaf`, each once, the collaboration first. None for a leaf that
    /// does not read back as exactly one event (`EventLeaf.event(from:)`), or an event of any
    /// stream but a collaboration's.
    public static func keys(leaf: [UInt8]) -> [IndexKey] {
        guard let event = EventLeaf.event(from: leaf) else { return [] }
        return keys(streamId: event.streamId, data: event.data)
    }

    /// The keys of an event of stream `streamId` with data `data`.
    public static func keys(streamId: String, data: String) -> [IndexKey] {
        guard let id = Streams.collaborationId(of: streamId) else { return [] }
        var keys: [IndexKey] = [.collaboration(id)]
        for rootHash in identities(in: data) where !keys.contains(.identity(rootHash)) {
            keys.append(.identity(rootHash))
        }
        return keys
    }

    /// The identities `data` names: the values of `identityMembers` at its top level that are
    /// strings in canonical, padded, standard base64 of exactly 32 bytes. None unless `data` is
    /// JSON as the store admits it (`JSONSyntax`) and its top-level value an object with no
    /// member name twice (names compared as UTF-8 bytes, after their escapes are read).
    static func identities(in data: String) -> [Hash256] {
        guard JSONSyntax.isValid(data) else { return [] }
        var reader = JSONReader(data)
        var names = Set<[UInt8]>()
        var found: [Hash256] = []
        do {
            try reader.object { reader, name in
                guard names.insert(Array(name.utf8)).inserted else { throw RepeatedName() }
                guard identityMembers.contains(where: { $0.utf8.elementsEqual(name.utf8) }) else {
                    return try reader.skipValue()
                }
                if let text = try reader.optionalString(), let bytes = Base64.decode(text), let rootHash = Hash256(bytes) {
                    found.append(rootHash)
                }
            }
            try reader.end()
        } catch {
            return []
        }
        return found
    }

    private struct RepeatedName: Error {}
}
