import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import LedgerTokens
import Logging
import PostgresNIO
import TransparencyLog

/// `ledger serve`'s process (`LedgerProcess`; the checkpointer only when given a signer) on a
/// free port and a migrated database, for the demo and the benchmarks: the HTTP path is the real
/// one, over loopback.
public enum LocalLedger {
    public struct Running: Sendable {
        public let baseURL: URL
        public let authority: TokenAuthority
        /// The process's own pool.
        public let client: PostgresClient
    }

    public static func run<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, configuration: LedgerConfiguration = LedgerConfiguration(), maxConnections: Int = 40,
        standby: DatabaseSettings? = nil, signer: NoteSigner? = nil, _ body: @Sendable (Running) async throws -> T
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
        return try await process.serving(logger: logger) { running in
            try await body(Running(baseURL: running.baseURL, authority: authority, client: running.client))
        }
    }
}
