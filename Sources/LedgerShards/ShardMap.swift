import LedgerDomain

/// Which shard holds a collaboration, by PL/Proxy's rule: a cluster has a power-of-two number of
/// partitions, each naming the shard (a libpq connection string) that holds it, and an id lives
/// in partition `hashtext(id) & (count - 1)`, what `RUN ON hashtext(id)` picks. Several partitions
/// may name one shard; adding a shard moves partitions to it, never the hash (docs/SCALING.md).
///
/// PL/Proxy's `modular_mapping` (partition = hash mod count) is not this rule: a map is never made
/// from a cluster that sets it (`ShardCluster`), so the two can never disagree.
public struct ShardMap: Sendable, Equatable {
    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case partitionCount(Int)
        case emptyShard(partition: Int)

        public var description: String {
            switch self {
            case .partitionCount(let count): "a shard map needs a power-of-two number of partitions, not \(count)"
            case .emptyShard(let partition): "partition \(partition) names no shard"
            }
        }
    }

    /// Partition i's shard.
    public let partitions: [String]

    public init(partitions: [String]) throws(Invalid) {
        guard partitions.count > 0, partitions.count & (partitions.count - 1) == 0 else {
            throw .partitionCount(partitions.count)
        }
        if let empty = partitions.firstIndex(where: \.isEmpty) { throw .emptyShard(partition: empty) }
        self.partitions = partitions
    }

    /// The distinct shards, in the order their first partition comes.
    public var shards: [String] {
        var seen: Set<String> = []
        return partitions.filter { seen.insert($0).inserted }
    }

    /// The partition of `id` (a collaboration id).
    public func partition(of id: String) -> Int { ShardMapRecorded.partition(of: id, count: partitions.count) }

    /// The map as the top log records it: each partition's shard as its index in `shards`.
    public var recorded: ShardMapRecorded {
        let shards = self.shards
        return ShardMapRecorded(partitions: partitions.map { shards.firstIndex(of: $0)! })
    }

    /// The shard that holds `id`.
    public func shard(of id: String) -> String { partitions[partition(of: id)] }
}
