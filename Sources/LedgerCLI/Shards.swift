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

    /// Each shard of the cluster `server` defined in `owner`'s database, migrated (`serve` does
    /// this before it starts on shards).
    static func migrate(cluster server: String, owner: DatabaseSettings, logger: Logger) async throws {
        let map = try await owner.withClient(logger: logger) { try await ShardCluster.map(server: server, client: $0, logger: logger) }
        for shard in map.shards {
            let applied = try await ShardConnection.settings(shard, login: owner).withClient(logger: logger) {
                try await Migrator(client: $0, logger: logger).migrate()
            }
            if !applied.isEmpty { logger.info("migrations applied", metadata: ["shard": "\(shard)", "names": "\(applied)"]) }
        }
    }
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
            var shards: [String] = []
            for index in 0..<count {
                let name = "\(owner.database)_shard_\(index)"
                try await PostgresAdmin.createDatabaseIfMissing(name, on: owner, logger: logger)
                // The embedded cluster's port changes at each start: its shards are named by
                // database alone, on the server the cluster is defined on (ShardConnection).
                shards.append(
                    embedded == nil
                        ? ShardConnection.keywords(host: owner.host, port: owner.port, database: name)
                        : ShardConnection.keywords(database: name))
            }
            let map = try ShardMap(partitions: (0..<partitionCount).map { shards[$0 % count] })
            try await owner.withClient(logger: logger) {
                try await ShardCluster.define(server: cluster, as: map, client: $0, logger: logger)
            }
            try await Shards.migrate(cluster: cluster, owner: owner, logger: logger)
            print("\(cluster): \(partitionCount) partitions over \(count) shards (\(shards.joined(separator: "; ")))")
        }
    }
}
