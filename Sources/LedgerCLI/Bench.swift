import ArgumentParser
import Foundation
import LedgerPostgres
import LedgerStore
import Logging

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmarks that print their figures next to a baseline measured in the same run.",
        subcommands: [BenchAppend.self, BenchVerify.self, BenchReplay.self, BenchProofs.self, BenchFeed.self, BenchFeedClients.self, BenchReplica.self])
}

/// Options shared by benchmarks: where to run them.
struct BenchTarget: ParsableArguments {
    @Option(help: "Run against this PostgreSQL URL (a database named ledger_bench is recreated there). Default: a throwaway embedded cluster.")
    var databaseURL: String?

    /// Runs `body` on a fresh, migrated bench database; a throwaway cluster (stopped and
    /// deleted afterwards) unless a URL was given.
    func run(logger: Logger, _ body: (DatabaseSettings) async throws -> Void) async throws {
        try await ThrowawayDatabase.run(serverURL: databaseURL, logger: logger, body)
    }
}

/// A fresh, migrated `ledger_bench` database: on the server at `serverURL`, else on a
/// throwaway embedded cluster that is stopped and deleted afterwards.
enum ThrowawayDatabase {
    static func run(serverURL: String?, logger: Logger, _ body: (DatabaseSettings) async throws -> Void) async throws {
        let (settings, embedded, directory) = try await prepare(serverURL: serverURL, logger: logger)
        defer { if let directory { try? FileManager.default.removeItem(at: directory) } }
        try await stopping(embedded) { try await body(settings) }
    }

    private static func prepare(serverURL: String?, logger: Logger) async throws -> (DatabaseSettings, EmbeddedPostgres?, URL?) {
        let server: DatabaseSettings
        var embedded: EmbeddedPostgres?
        var directory: URL?
        if let url = serverURL {
            server = try DatabaseSettings(url: url)
        } else {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-\(UUID().uuidString.prefix(8))")
            let cluster = EmbeddedPostgres(
                options: .init(dataDirectory: dir, serverSettings: ["max_connections": "200"], database: "postgres"),
                logger: logger)
            directory = dir
            server = try await cluster.start()
            embedded = cluster
        }
        try await PostgresAdmin.dropDatabase("ledger_bench", on: server.with(database: "postgres"), logger: logger)
        try await PostgresAdmin.createDatabaseIfMissing("ledger_bench", on: server.with(database: "postgres"), logger: logger)
        let bench = server.with(database: "ledger_bench")
        try await withDatabase(bench, logger: logger) { client in
            try await Migrator(client: client, logger: logger).migrate()
        }
        return (bench, embedded, directory)
    }
}

/// Small statistics helpers for benchmark output.
enum Stats {
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    static func format(_ value: Double) -> String {
        String(format: "%10.0f", value)
    }
}
