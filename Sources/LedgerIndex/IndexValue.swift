/// A key's value: a hash chain over its events in log order, so a new event extends the value
/// from the value alone, and the value commits to the whole list (docs/TRUST.md, "The verifiable
/// index"). `v₀` is `Hash256.zero`; `vᵢ = IndexHashing.valueStep(vᵢ₋₁, pᵢ, leafHashᵢ)`.
public enum IndexValue {
    /// One event of a key's list: its position and the log's hash of its leaf.
    public struct Entry: Hashable, Sendable {
        public let position: Int64
        public let leafHash: Hash256

        /// Nil for a position below 1 (positions start at 1).
        public init?(position: Int64, leafHash: Hash256) {
            guard position >= 1 else { return nil }
            (self.position, self.leafHash) = (position, leafHash)
        }
    }

    /// `value` extended by `entries`, in their order.
    public static func extend(_ value: Hash256, with entries: some Sequence<Entry>) -> Hash256 {
        entries.reduce(value) { previous, entry in
            IndexHashing.valueStep(previous, position: entry.position, leafHash: entry.leafHash)
        }
    }

    /// The value of a key whose list is `entries`: the chain from `Hash256.zero`. A verifier
    /// recomputes it from the positions and leaves an answer lists, and compares it with the
    /// value the tree proves; it also checks that the positions increase and that each leaf
    /// yields the key (`IndexMap`), which the chain alone does not say.
    public static func chain(_ entries: some Sequence<Entry>) -> Hash256 { extend(.zero, with: entries) }
}
