import TransparencyLog

/// A key's whole list under a recorded revision, as a lookup proves it (docs/TRUST.md, "The
/// verifiable index", "Lookups"): the revision (N, root), the key's proof under the root, and
/// every listed position with its leaf. `verify` checks the links inside the index; the leaves'
/// inclusion under a checkpoint, and the revision record's, are the log's own proofs, checked
/// beside it.
public struct KeyListing: Sendable {
    /// One listed event: its position and its leaf's bytes (the log's entry, as the tiles serve it).
    public struct Listed: Hashable, Sendable {
        public let position: Int64
        public let leaf: [UInt8]

        public init(position: Int64, leaf: [UInt8]) {
            (self.position, self.leaf) = (position, leaf)
        }
    }

    /// Why a listing proves nothing: the first link that does not hold.
    public struct Refused: Error, Hashable, CustomStringConvertible {
        public var description: String
    }

    public let revision: IndexRevision
    public let proof: PrefixProof
    public let listed: [Listed]

    public init(revision: IndexRevision, proof: PrefixProof, listed: [Listed]) {
        (self.revision, self.proof, self.listed) = (revision, proof, listed)
    }

    /// The positions of every event that names `key` among the log's first `revision.logSize`,
    /// and no other, once every link holds:
    /// 1. the proof verifies for `key` under the revision's root (`PrefixProof.verify`);
    /// 2. the positions rise strictly, from 1, up to the revision's size;
    /// 3. every listed leaf yields `key` (`IndexMap`);
    /// 4. the chain of (position, leaf hash) over the listing is the value proven, or the key is
    ///    absent and nothing is listed.
    /// A position dropped, added or moved, or a leaf swapped, breaks 3 or 4.
    public func verify(key: IndexKey) throws(Refused) -> [Int64] {
        let answer: PrefixProof.Answer
        do {
            answer = try proof.verify(key: key, root: revision.root)
        } catch {
            throw Refused(description: "the proof of \(key) does not hold under the revision's root: \(error)")
        }
        var previous: Int64 = 0
        var entries: [IndexValue.Entry] = []
        for item in listed {
            guard item.position > previous else {
                throw Refused(description: "position \(item.position) is listed after \(previous): positions rise strictly from 1")
            }
            guard item.position <= revision.logSize else {
                throw Refused(description: "position \(item.position) lies past the revision, which covers 1 … \(revision.logSize)")
            }
            guard IndexMap.keys(leaf: item.leaf).contains(key) else {
                throw Refused(description: "the leaf listed at position \(item.position) does not name \(key)")
            }
            // In range: checked above. A SHA-256 digest is 32 bytes.
            entries.append(IndexValue.Entry(position: item.position, leafHash: Hash256(digest: MerkleTree.leafHash(item.leaf)))!)
            previous = item.position
        }
        switch answer {
        case .absent:
            guard listed.isEmpty else {
                throw Refused(description: "\(key) is proven absent, yet \(listed.count) events are listed for it")
            }
        case .present(let value):
            guard IndexValue.chain(entries) == value else {
                throw Refused(
                    description:
                        "the listed events do not chain to \(key)'s value under the revision: an event is missing, added or changed")
            }
        }
        return entries.map(\.position)
    }
}
