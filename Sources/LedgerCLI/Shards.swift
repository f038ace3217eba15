import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerShards
import LedgerStore
import LedgerTelemetry
import Logging

/// `ledger shards …`: shards on the cluster the ledger's database is on (docs/SCALING.md).
struct Shards: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shards: several databases holding the collaborations, routed by a PL/Proxy cluster.",
        subcommands: [ShardsInit.self])
}

struct ShardsInit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract:
            "Make COUNT shard databases beside the ledger's database (embedded unless a URL is set), migrated, and the PL/Proxy cluster that maps PARTITIONS partitions over them in turn; then `ledger serve --shard-cluster CLUSTER`."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "Shard databases, named after the ledger's database with _shard_0, _shard_1…") var count: Int
    @Option(help: "Partitions, a power of two at least COUNT (default 16, or COUNT's next power of two): the unit a shard is moved by.")
    var partitions: Int?
    @Option(help: "The PL/Proxy cluster's name (a foreign server in the ledger's database).") var cluster = "ledger_shards"

    /// Partitions given, else 16, or COUNT's next power of two.
    var partitionCount: Int { partitions ?? max(16, 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)) }

    func validate() throws {
        guard (1...64).contains(count) else { throw ValidationError("--count must be between 1 and 64") }
        let partitions = partitionCount
        guard (count...1024).contains(partitions), partitions & (partitions - 1) == 0 else {
            throw ValidationError("--partitions must be a power of two from --count to 1024")
        }
    }

    func run() async throws {
        let configuration = try database.configuration()
        let logger = Logs.bootstrap(configuration)
        let (owner, embedded) = try await configuration.connect(logger: logger)
        try await stopping(embedded) {
            let map = try await ShardCluster.create(
                server: cluster, databases: (0..<count).map { "\(owner.database)_shard_\($0)" }, partitions: partitionCount, owner: owner,
                onOwnServer: embedded != nil, logger: logger)
            print("\(cluster): \(partitionCount) partitions over \(count) shards (\(map.shards.joined(separator: "; ")))")
        }
    }
}
