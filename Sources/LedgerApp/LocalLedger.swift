import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerShards
import LedgerStore
import LedgerTokens
import Logging
import PostgresNIO
import TransparencyLog

/// `ledger serve`'s process (`LedgerProcess`; the checkpointer only when given a signer) on a
/// free port and a migrated database, for the demo and the benchmarks: the HTTP path is the real
/// one, over loopback. With `shards`, on that many databases of the same cluster, made for this
/// run and dropped after it, routed by a PL/Proxy cluster defined in `settings`' database.
public enum LocalLedger {
    public struct Running: Sendable {
        public let baseURL: URL
        public let authority: TokenAuthority
        /// The process's own pool (the first shard's, on shards).
        public let client: PostgresClient
        /// Each shard's database, as `settings` reaches it; empty on one database.
        public let shards: [DatabaseSettings]
    }

    public static func run<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, configuration: LedgerConfiguration = LedgerConfiguration(), maxConnections: Int = 40,
        standby: DatabaseSettings? = nil, signer: NoteSigner? = nil, shards: Int? = nil, _ body: @Sendable (Running) async throws -> T
    ) async throws -> T {
        try await settings.withClient(logger: logger) { try await Migrator(client: $0, logger: logger).migrate() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("local-ledger-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A known port, so the universal links the ledger hands out point at it; a folder of its
        // own for the published checkpoint, which belongs to this database's log alone.
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = try EmbeddedPostgres.freePort()
        configuration.publicBaseURL = nil
        configuration.checkpointFile = folder.appendingPathComponent("published-checkpoint").path
        let authority = try await TokenAuthority(secret: TokenAuthority.randomSecret())
        var process = LedgerProcess(
            .serve, configuration: configuration, database: settings, standby: standby, authority: authority, signer: signer)
        process.maxConnections = maxConnections
        let tag = UUID().uuidString.prefix(8).lowercased()
        let databases = (0..<(shards ?? 0)).map { settings.with(database: "\(settings.database)_\(tag)_shard_\($0)") }
        let result: Result<T, any Error>
        do {
            if !databases.isEmpty {
                process.shardCluster = "local_shards_\(tag)"
                try await ShardCluster.create(
                    server: process.shardCluster!, databases: databases.map(\.database), partitions: 16, owner: settings, onOwnServer: true,
                    logger: logger)
            }
            result = .success(
                try await process.serving(logger: logger) { running in
                    try await body(Running(baseURL: running.baseURL, authority: authority, client: running.client, shards: databases))
                })
        } catch {
            result = .failure(error)
        }
        // Best effort: what this run made goes, whatever failed; the run's own error comes first.
        if let cluster = process.shardCluster {
            _ = try? await settings.withClient(logger: logger) {
                try await $0.query(PostgresQuery(unsafeSQL: "DROP SERVER IF EXISTS \(PostgresAdmin.quoteIdentifier(cluster))"))
            }
            for database in databases { try? await PostgresAdmin.dropDatabase(database.database, on: settings, logger: logger) }
        }
        return try result.get()
    }
}
