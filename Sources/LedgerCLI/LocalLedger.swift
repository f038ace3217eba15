import Foundation
import LedgerAPI
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO

/// A ledger running inside this process (the services of `ledger serve`) on a free port, for
/// the demo and the benchmarks: the HTTP path is the real one, over loopback.
enum LocalLedger {
    struct Running: Sendable {
        let baseURL: URL
        let authority: TokenAuthority
        let client: PostgresClient
    }

    static func run<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, verifierConcurrency: Int = 8, maxConnections: Int = 40,
        standby: PostgresClient? = nil, _ body: @Sendable (Running) async throws -> T
    ) async throws -> T {
        try await withDatabase(settings, logger: logger, maxConnections: maxConnections) { client in
            try await Migrator(client: client, logger: logger).migrate()
            let authority = try await TokenAuthority(secret: TokenAuthority.randomSecret())
            let store = PostgresEventStore(client: client, logger: logger)
            // A known port, so the universal links the ledger hands out point at it.
            let configuration = APIConfiguration(host: "127.0.0.1", port: try EmbeddedPostgres.freePort())
            return try await LedgerServer.serving(logger: logger) { onRunning in
                LedgerServer.allInOne(
                    client: client, store: store, authority: authority, configuration: configuration,
                    verifierConcurrency: verifierConcurrency, standby: standby, logger: logger, onRunning: onRunning)
            } _: { port in
                try await body(Running(baseURL: URL(string: "http://127.0.0.1:\(port)")!, authority: authority, client: client))
            }
        }
    }
}

