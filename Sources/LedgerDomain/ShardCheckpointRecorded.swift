import Foundation
import LedgerWire
import TransparencyLog

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
    /// The top log's position of the partition map in force when this was recorded
    /// (`ShardMapRecorded`); absent in entries recorded before the map was.
    public var map: Int64?

    public init(shard: Int, origin: String, size: Int64, rootHash: String, checkpoint: String, map: Int64? = nil) {
        (self.shard, self.origin, self.size, self.rootHash, self.checkpoint) = (shard, origin, size, rootHash, checkpoint)
        self.map = map
    }

    /// Shard k's log's origin, and its checkpoint key's name: the deployment's origin (the top
    /// log's) with `/shard/k` appended.
    public static func origin(shard: Int, top: String) -> String { "\(top)/shard/\(shard)" }
}

// Reading an entry back, the one rule every verifier of a ledger on shards applies
// (`EvidenceVerifier` for both forms of two-level evidence, `LedgerClient.verifyShardLogs`).
extension ShardCheckpointRecorded {
    /// Why an event is not a recorded checkpoint of the deployment.
    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    /// The recorded checkpoint an event of the top log is, if it is one of this deployment's
    /// shards: an event `ShardCheckpointRecorded` of stream `shard-k` (k ≥ 0) whose data names
    /// shard k and its origin under the deployment's key's name (`origin(shard:top:)`).
    public static func entry(type: String, streamId: String, data: String, deployment key: NoteVerifier) throws(Refused) -> Self {
        guard type == Self.type, let recorded = try? CanonicalJSON.decode(Self.self, from: data) else {
            throw Refused(description: "it is a \(type) of \(streamId), not a shard's recorded checkpoint")
        }
        guard recorded.shard >= 0, streamId == "shard-\(recorded.shard)", recorded.origin == origin(shard: recorded.shard, top: key.name)
        else {
            throw Refused(
                description: "it records shard \(recorded.shard) of \(recorded.origin) in \(streamId), not a shard of this deployment")
        }
        return recorded
    }

    /// The shard's checkpoint key: the deployment's key under the shard's origin, so no list of
    /// shards or of their keys needs trusting.
    public func key(deployment key: NoteVerifier) throws -> NoteVerifier {
        try NoteVerifier(name: origin, publicKey: key.publicKey)
    }

    /// Whether `checkpoint` is the tree this entry records.
    public func records(_ checkpoint: Checkpoint) -> Bool {
        checkpoint.size == size && Base64.encode(checkpoint.rootHash) == rootHash
    }
}
