import ArgumentParser
import LedgerAPI
import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO

/// Where the database is: `--database-url`/`LEDGER_DATABASE_URL`, else the embedded cluster
/// under `--data-dir`/`LEDGER_DATA_DIR` (default `./.ledger`). Flags win over environment.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "PostgreSQL URL (env LEDGER_DATABASE_URL). Unset: the embedded cluster.")
    var databaseURL: String?

    @Option(name: .long, help: "Data folder for the embedded cluster and development secrets (env LEDGER_DATA_DIR, default ./.ledger).")
    var dataDir: String?

    var resolvedDataDir: URL {
        let path = dataDir ?? LedgerSettings.value("LEDGER_DATA_DIR") ?? ".ledger"
        return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            .standardizedFileURL
    }

    var resolvedURL: String? { databaseURL ?? LedgerSettings.value("LEDGER_DATABASE_URL") }

    /// Settings to connect with, starting (or attaching to) the embedded cluster if no URL is configured.
    func connect(logger: Logger) async throws -> (DatabaseSettings, EmbeddedPostgres?) {
        if let url = resolvedURL {
            return (try DatabaseSettings(url: url), nil)
        }
        let embedded = EmbeddedPostgres(options: .init(dataDirectory: resolvedDataDir), logger: logger)
        return (try await embedded.start(), embedded)
    }
}

enum Logs {
    /// Logs to stderr: `key=value` text, or one JSON object per line (LEDGER_LOG_FORMAT=json);
    /// level from LEDGER_LOG_LEVEL (default info).
    static func bootstrap() -> Logger {
        let level = LedgerSettings.value("LEDGER_LOG_LEVEL").flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        let json = LedgerSettings.value("LEDGER_LOG_FORMAT")?.lowercased() == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "ledger")
    }

    /// Bootstraps logging and returns a logger showing warnings and worse only (benchmarks,
    /// the demo: their output is the report, not the ledger's info lines).
    static func quiet() -> Logger {
        var logger = bootstrap()
        logger.logLevel = .warning
        return logger
    }
}

extension DatabaseOptions {
    /// One command's database session: logs set up, connected (the embedded cluster started
    /// when no URL is set), a running client for `body`, and the cluster stopped afterwards.
    func withClient<T: Sendable>(_ body: @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        try LedgerSettings.check(ProcessInfo.processInfo.environment)
        let logger = Logs.bootstrap()
        let (settings, embedded) = try await connect(logger: logger)
        return try await stopping(embedded) {
            try await withDatabase(settings, logger: logger) { client in try await body(client, logger) }
        }
    }
}

/// Runs `body` with a running PostgresClient on `settings`.
func withDatabase<T: Sendable>(
    _ settings: DatabaseSettings, logger: Logger, maxConnections: Int = 20,
    _ body: @Sendable (PostgresClient) async throws -> T
) async throws -> T {
    try await settings.withClient(logger: logger, maxConnections: maxConnections, body)
}

/// Runs `body`, then stops the embedded cluster if this process started it, also on error.
func stopping<T: Sendable>(_ embedded: EmbeddedPostgres?, _ body: () async throws -> T) async throws -> T {
    do {
        let result = try await body()
        try await embedded?.stop()
        return result
    } catch {
        try? await embedded?.stop()
        throw error
    }
}
