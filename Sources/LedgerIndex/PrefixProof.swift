/// A key's value, or its absence, under a root of the prefix tree (docs/TRUST.md, "The
/// verifiable index"): the node where the key's path ends and the siblings along the way.
///
/// The verifier takes the key hash from the key it asked about, never from the proof, and
/// refuses every proof that is not exactly the path of that key to that root: the answer is one
/// per root (two proofs for one key under one root would be a SHA-256 collision).
public struct PrefixProof: Hashable, Sendable {
    /// The node where the key's path ends.
    public enum Terminal: Hashable, Sendable {
        /// The key's own leaf: the key is present with this value.
        case found(value: Hash256)
        /// Another key's leaf, whose first `depth` bits are the key's: the key is absent.
        case otherLeaf(key: Hash256, value: Hash256)
        /// An empty child: the key is absent.
        case empty
    }

    /// What a verified proof says of the key.
    public enum Answer: Hashable, Sendable {
        case present(value: Hash256)
        case absent
    }

    /// Why a proof shows nothing: the rule of docs/TRUST.md ("Proofs", numbered 1 to 4 there)
    /// it breaks, or bytes that are no proof's.
    public struct Refused: Error, Hashable, CustomStringConvertible {
        public enum Rule: Hashable, Sendable {
            /// Not the bytes `bytes` writes for any proof (`init(bytes:)`).
            case bytes
            /// Rule 1: a path deeper than 256 levels.
            case depth
            /// Rule 2: an absence shown by another key's leaf that is the key's own, or that is
            /// not on the key's path down to the leaf's depth.
            case otherLeaf
            /// Rule 3: an empty sibling beside the node where the path ends, a shape the tree
            /// never makes.
            case emptySibling
            /// Rule 4: the path does not fold up to the root.
            case root
        }

        public var rule: Rule
        public var description: String
    }

    public var terminal: Terminal
    /// The siblings of the path's nodes, from depth 1 (a child of the root) down to the
    /// terminal's depth, which is their count: 0 ... 256.
    public var siblings: [Hash256]

    public init(terminal: Terminal, siblings: [Hash256]) {
        self.terminal = terminal
        self.siblings = siblings
    }

    /// The terminal's depth.
    public var depth: Int { siblings.count }

    /// What the proof shows of `key` under `root`, or why it shows nothing: how a verifier
    /// checks an answer, hashing the key it asked about itself (`IndexKey.hash`), never taking a
    /// key hash from the answer.
    public func verify(key: IndexKey, root: Hash256) throws(Refused) -> Answer {
        try verify(key: key.hash, root: root)
    }

    /// What the proof shows of the key whose hash is `key` under `root`, or why it shows nothing:
    /// for a tree over raw key hashes (the tree's own tests, a store checking what it wrote). The
    /// rules are checked in docs/TRUST.md's order, each refusal naming its rule, and none traps:
    /// rule 1 comes first, so no bit past 255 of `key` is ever read.
    public func verify(key: Hash256, root: Hash256) throws(Refused) -> Answer {
        let depth = siblings.count
        guard depth <= NodePosition.maxDepth else {
            throw Refused(rule: .depth, description: "a path of \(depth) levels, past 256")
        }
        var node: Hash256
        let answer: Answer
        switch terminal {
        case .found(let value):
            node = IndexHashing.treeLeaf(key: key, value: value)
            answer = .present(value: value)
        case .otherLeaf(let other, let value):
            guard other != key else { throw Refused(rule: .otherLeaf, description: "an absence shown by the key's own leaf") }
            guard other.commonPrefix(with: key) >= depth else {
                throw Refused(rule: .otherLeaf, description: "the leaf at depth \(depth) is not on the key's path")
            }
            node = IndexHashing.treeLeaf(key: other, value: value)
            answer = .absent
        case .empty:
            node = .zero
            answer = .absent
        }
        // A leaf or an empty child below the root has a sibling holding keys: a parent over one
        // key alone is never made (that key's leaf sits where the parent would).
        if let deepest = siblings.last, deepest == .zero {
            throw Refused(rule: .emptySibling, description: "an empty sibling at depth \(depth), where the tree holds keys")
        }
        for level in stride(from: depth, to: 0, by: -1) {
            let sibling = siblings[level - 1]
            node = key.bit(level - 1) == 0 ? IndexHashing.treeParent(node, sibling) : IndexHashing.treeParent(sibling, node)
        }
        guard node == root else { throw Refused(rule: .root, description: "the path does not lead to the root \(root.base64)") }
        return answer
    }
}
