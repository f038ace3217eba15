import Foundation
import LedgerPostgres
import Logging

/// A fresh, migrated `ledger_bench` database for a benchmark or the demo: on the server at
/// `serverURL`, else on a throwaway embedded cluster that is stopped and deleted afterwards
/// (run from `binaries`, the configuration's `LEDGER_PG_BIN`, if set).
public enum ThrowawayDatabase {
    public static func run(
        serverURL: String?, binaries: String? = nil, logger: Logger, _ body: (DatabaseSettings) async throws -> Void
    ) async throws {
        let (settings, embedded, directory) = try await prepare(serverURL: serverURL, binaries: binaries, logger: logger)
        defer { if let directory { try? FileManager.default.removeItem(at: directory) } }
        try await stopping(embedded) { try await body(settings) }
    }

    private static func prepare(serverURL: String?, binaries: String?, logger: Logger) async throws -> (
        DatabaseSettings, EmbeddedPostgres?, URL?
    ) {
        let server: DatabaseSettings
        var embedded: EmbeddedPostgres?
        var directory: URL?
        if let url = serverURL {
            server = try DatabaseSettings(url: url)
        } else {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-\(UUID().uuidString.prefix(8))")
            let cluster = EmbeddedPostgres(
                options: .init(dataDirectory: dir, serverSettings: ["max_connections": "200"], database: "postgres", binaries: binaries),
                logger: logger)
            directory = dir
            server = try await cluster.start()
            embedded = cluster
        }
        try await PostgresAdmin.dropDatabase("ledger_bench", on: server.with(database: "postgres"), logger: logger)
        try await PostgresAdmin.createDatabaseIfMissing("ledger_bench", on: server.with(database: "postgres"), logger: logger)
        let bench = server.with(database: "ledger_bench")
        try await bench.withClient(logger: logger) { client in
            try await Migrator(client: client, logger: logger).migrate()
        }
        return (bench, embedded, directory)
    }
}
