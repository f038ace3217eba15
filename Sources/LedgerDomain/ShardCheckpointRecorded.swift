/// An entry of the top log of a ledger on shards (SPEC "Writes past one primary"): shard
/// `shard`'s signed checkpoint, recorded as the data of an event `ShardCheckpointRecorded` of the
/// stream `shard-k` (`TopLogRecorder`), and read back by `EvidenceVerifier` from two-level evidence.
public struct ShardCheckpointRecorded: Codable, Sendable, Equatable {
    public static let type = "ShardCheckpointRecorded"

    public var shard: Int
    public var origin: String
    public var size: Int64
    /// Standard base64 of the shard's root hash.
    public var rootHash: String
    /// The shard's signed checkpoint as it was published.
    public var checkpoint: String

    public init(shard: Int, origin: String, size: Int64, rootHash: String, checkpoint: String) {
        (self.shard, self.origin, self.size, self.rootHash, self.checkpoint) = (shard, origin, size, rootHash, checkpoint)
    }

    /// Shard k's log's origin, and its checkpoint key's name: the deployment's origin (the top
    /// log's) with `/shard/k` appended.
    public static func origin(shard: Int, top: String) -> String { "\(top)/shard/\(shard)" }
}
