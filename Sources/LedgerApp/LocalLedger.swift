import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import LedgerTokens
import Logging
import PostgresNIO
import TransparencyLog

/// A ledger running inside this process (the services of `ledger serve`; the checkpointer only
/// when given a signer) on a free port, for the demo and the benchmarks: the HTTP path is the real one,
/// over loopback.
public enum LocalLedger {
    public struct Running: Sendable {
        public let baseURL: URL
        public let authority: TokenAuthority
        public let client: PostgresClient
    }

    public static func run<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, configuration: LedgerConfiguration = LedgerConfiguration(), maxConnections: Int = 40,
        standby: PostgresClient? = nil, signer: NoteSigner? = nil, _ body: @Sendable (Running) async throws -> T
    ) async throws -> T {
        try await settings.withClient(logger: logger, maxConnections: maxConnections) { client in
            try await Migrator(client: client, logger: logger).migrate()
            let authority = try await TokenAuthority(secret: TokenAuthority.randomSecret())
            let store = EventStore(client: client, logger: logger)
            // A known port, so the universal links the ledger hands out point at it.
            var configuration = configuration
            configuration.host = "127.0.0.1"
            configuration.port = try EmbeddedPostgres.freePort()
            configuration.publicBaseURL = nil
            return try await LedgerServer.serving(logger: logger) { [configuration] onRunning in
                LedgerServer.allInOne(
                    client: client, store: store, authority: authority, configuration: configuration, signer: signer, standby: standby,
                    logger: logger, onRunning: onRunning)
            } _: { port in
                try await body(Running(baseURL: URL(string: "http://127.0.0.1:\(port)")!, authority: authority, client: client))
            }
        }
    }
}
