/// The deployment's partition map, recorded in the top log of a ledger on shards (SPEC "Writes
/// past one primary"; docs/TRUST.md, "The verifiable index", on shards): partition i's shard, as
/// the index k of the top log's `shard-k` streams (never a connection string: the top log is
/// public). An event `ShardMapRecorded` of the stream `shard-map`, appended by `TopLogRecorder`
/// whenever the map it serves differs from the last one recorded; each `ShardCheckpointRecorded`
/// names the position of the map in force when it was recorded (`map`), so an answer of shard k
/// for a collaboration proves that k is the shard the map gives it.
public struct ShardMapRecorded: Codable, Sendable, Equatable {
    public static let type = "ShardMapRecorded"
    public static let stream = "shard-map"

    /// Partition i's shard index; a power-of-two count, as PL/Proxy's rule needs.
    public var partitions: [Int]

    public init(partitions: [Int]) {
        self.partitions = partitions
    }

    /// The shard that holds collaboration `id`: partition `hashtext(id) & (count - 1)`, PL/Proxy's
    /// rule (`ShardMap.partition(of:)` is the same).
    public func shard(of id: String) -> Int { partitions[Self.partition(of: id, count: partitions.count)] }

    /// PL/Proxy's rule, `RUN ON hashtext(id)` over `count` (a power of two) partitions: the one
    /// Swift definition (in SQL, `ledger_collaboration_partition`, tested equal).
    public static func partition(of id: String, count: Int) -> Int {
        Int(UInt32(bitPattern: PostgresHashText.hash(id)) & UInt32(count - 1))
    }

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    /// The map an event of the top log is: an event `ShardMapRecorded` of stream `shard-map`
    /// whose data is exactly its canonical JSON (`{"partitions":[…]}`, no space), a power-of-two
    /// number of partitions, each a shard index (0 or more).
    public static func entry(type: String, streamId: String, data: String) throws(Refused) -> Self {
        guard type == Self.type, streamId == Self.stream, let map = try? CanonicalJSON.decode(Self.self, from: data),
            CanonicalJSON.encode(map) == data
        else {
            throw Refused(description: "it is a \(type) of \(streamId), not the deployment's partition map")
        }
        let count = map.partitions.count
        guard count > 0, count & (count - 1) == 0, map.partitions.allSatisfy({ $0 >= 0 }) else {
            throw Refused(description: "its \(count) partitions are not a power of two, each naming a shard index")
        }
        return map
    }
}
