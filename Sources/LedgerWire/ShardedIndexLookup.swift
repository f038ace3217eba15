/// On shards, `GET /v1/audit/lookup?identity=ROOTHASH`: an identity is named in collaborations on
/// every shard, each shard with its own log and index, so the answer is each shard's (an
/// `IndexLookup` through both levels, with the partition map its top entry names), one for each
/// shard of that map, in shard order (docs/TRUST.md, "An identity across shards"). A verifier
/// requires every answer under one map, and exactly the shards that map names.
public struct ShardedIndexLookup: Codable, Sendable, Equatable {
    /// The identity asked: its root hash, standard base64.
    public var identity: String
    public var shards: [IndexLookup]

    public init(identity: String, shards: [IndexLookup]) {
        (self.identity, self.shards) = (identity, shards)
    }
}
