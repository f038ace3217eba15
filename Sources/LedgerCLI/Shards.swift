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
        subcommands: [ShardsInit.self, ShardsMove.self])
}

struct ShardsInit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract:
            "Make COUNT shard databases beside the ledger's database (embedded unless a URL is set), or name existing ones with --shard, migrate them, and define the PL/Proxy cluster that maps PARTITIONS partitions over them in turn; then `ledger serve --shard-cluster CLUSTER`."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "Shard databases to make, named after the ledger's database with _shard_0, _shard_1…") var count: Int?
    @Option(
        name: .customLong("shard"),
        help: ArgumentHelp(
            "A shard database that exists, instead of --count: its connection string (host=… port=… dbname=…), reached with the ledger's own login; repeat in shard order.",
            valueName: "connection"))
    var shards: [String] = []
    @Option(
        help:
            "Partitions, a power of two at least the shards' count (default 16, or the count's next power of two): the unit a shard is moved by."
    )
    var partitions: Int?
    @Option(help: "The PL/Proxy cluster's name (a foreign server in the ledger's database).") var cluster = "ledger_shards"

    /// How many shards: --count, or the --shard options.
    var shardCount: Int { count ?? shards.count }

    /// Partitions given, else 16, or the count's next power of two.
    var partitionCount: Int { partitions ?? max(16, 1 << (Int.bitWidth - (shardCount - 1).leadingZeroBitCount)) }

    func validate() throws {
        guard (count == nil) != shards.isEmpty else { throw ValidationError("give --count, or one --shard for each shard database") }
        guard (1...64).contains(shardCount) else { throw ValidationError("between 1 and 64 shards") }
        guard Set(shards).count == shards.count else { throw ValidationError("a --shard is given twice") }
        let partitions = partitionCount
        guard (shardCount...1024).contains(partitions), partitions & (partitions - 1) == 0 else {
            throw ValidationError("--partitions must be a power of two from the shards' count to 1024")
        }
    }

    func run() async throws {
        let configuration = try database.configuration()
        let logger = Logs.bootstrap(configuration)
        let (owner, embedded) = try await configuration.connect(logger: logger)
        try await stopping(embedded) {
            let map = try await DatabaseFailure.explaining("defining the PL/Proxy cluster \(cluster)") {
                if let count {
                    try await ShardCluster.create(
                        server: cluster, databases: (0..<count).map { "\(owner.database)_shard_\($0)" }, partitions: partitionCount,
                        owner: owner, onOwnServer: embedded != nil, logger: logger)
                } else {
                    try await ShardCluster.create(server: cluster, shards: shards, partitions: partitionCount, owner: owner, logger: logger)
                }
            }
            print("\(cluster): \(partitionCount) partitions over \(shardCount) shards (\(map.shards.joined(separator: "; ")))")
        }
    }
}

struct ShardsMove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract:
            "Add a shard by moving PARTITION to it, with every `ledger serve` stopped: the new shard starts as a copy of the partition's shard (made here when it is a new database on that shard's server), then each shard keeps what it holds and the cluster names the new shard for the partition (docs/SCALING.md)."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "The partition to move: one after every shard's first, so no shard's number changes.") var partition: Int
    @Option(
        name: .customLong("to"),
        help: ArgumentHelp(
            "The new shard's connection string (host=… port=… dbname=…, or dbname=… alone on the ledger's server), reached with the ledger's own login.",
            valueName: "connection"))
    var target: String
    @Option(help: "The PL/Proxy cluster's name (a foreign server in the ledger's database).") var cluster = "ledger_shards"

    func run() async throws {
        let configuration = try database.configuration()
        let logger = Logs.bootstrap(configuration)
        let (owner, embedded) = try await configuration.connect(logger: logger)
        try await stopping(embedded) {
            // The move reaches the new shard with the ledger's own login: a refusal says where its password comes from.
            let password = embedded == nil ? "the password in \(Setting.databaseURL.variable) (or --database-url)" : nil
            let report = try await DatabaseFailure.explaining(nil, passwordSource: password) {
                try await ShardMove.move(server: cluster, partition: partition, to: target, owner: owner, logger: logger)
            }
            let how =
                report.finished ? "a move cut short finished" : "\(report.copied ? "copied" : "a copy found") at position \(report.head)"
            print(
                "\(cluster): partition \(partition) moved from \(report.source) to \(report.target) (shard "
                    + "\(report.map.shards.firstIndex(of: report.target) ?? 0), \(how)); start `ledger serve --shard-cluster \(cluster)`")
        }
    }
}
