import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerTelemetry
import Logging
import PostgresNIO

/// The process's configuration: every setting from the environment, read once.
func loadConfiguration() throws -> LedgerConfiguration {
    do {
        return try LedgerConfiguration.fromEnvironment()
    } catch let malformed as LedgerSettings.Malformed {
        throw ValidationError(malformed.description)
    }
}

/// Where the database is: `--database-url`/`LEDGER_DATABASE_URL`, else the embedded cluster
/// under `--data-dir`/`LEDGER_DATA_DIR`. Flags win over environment.
struct DatabaseOptions: ParsableArguments {
    // Help from the settings (LedgerSettings): the variable and default written once.
    @Option(name: .long, help: ArgumentHelp(Setting.databaseURL.help("PostgreSQL URL")))
    var databaseURL: String?

    @Option(name: .long, help: ArgumentHelp(Setting.dataDir.help("Data folder for the embedded cluster and development secrets")))
    var dataDir: String?

    /// The configuration with these flags applied.
    func configuration() throws -> LedgerConfiguration {
        var configuration = try loadConfiguration()
        if let databaseURL { configuration.databaseURL = databaseURL }
        if let dataDir { configuration.dataDir = dataDir }
        return configuration
    }
}

extension LedgerConfiguration {
    /// Settings to connect with, starting (or attaching to) the embedded cluster if no URL is configured.
    /// A refused login is said at once (`checkLogin`), naming the role and where its password comes from.
    func connect(logger: Logger) async throws -> (DatabaseSettings, EmbeddedPostgres?) {
        if let url = databaseURL {
            let settings = try DatabaseSettings(url: url)
            try await settings.checkLogin(
                passwordSource: "the password in \(Setting.databaseURL.variable) (or --database-url)", logger: logger)
            return (settings, nil)
        }
        let embedded = EmbeddedPostgres(options: .init(dataDirectory: dataDirectory, binaries: pgBin), logger: logger)
        do {
            return (try await embedded.start(), embedded)
        } catch let missing as EmbeddedPostgres.MissingPassword {
            throw Refusal(
                "\(missing) (a restore without --identity leaves it out). Restore it with `ledger restore --from BACKUP_DIR "
                    + "--data-dir \(dataDirectory.path) --secrets-only --identity FILE`, or write the owner's password into it (mode 0600)."
            )
        }
    }

    /// One command's database session: logs set up, connected (the embedded cluster started
    /// when no URL is set), a running client for `body`, and the cluster stopped afterwards.
    func withClient<T: Sendable>(_ body: @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        let logger = Logs.bootstrap(self)
        let (settings, embedded) = try await connect(logger: logger)
        return try await stopping(embedded) {
            try await settings.withClient(logger: logger) { client in try await body(client, logger) }
        }
    }
}

extension DatabaseOptions {
    func withClient<T: Sendable>(_ body: @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        try await configuration().withClient(body)
    }
}
