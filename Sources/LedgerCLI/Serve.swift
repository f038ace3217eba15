import ArgumentParser
import Foundation
import LedgerTelemetry
import LedgerTokens
import TransparencyLog
import LedgerApp
import LedgerConfiguration
import LedgerLog
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO
import ServiceLifecycle
import UnixSignals

/// HTTP options: flag, then environment, then default.
struct HTTPOptions: ParsableArguments {
    @Option(help: ArgumentHelp(Setting.host.help("Address to listen on"))) var host: String?
    @Option(help: ArgumentHelp(Setting.port.help("Port to listen on"))) var port: Int?
    @Option(help: ArgumentHelp(Setting.publicBaseURL.help("Base URL of universal links"))) var publicBaseURL: String?

    func apply(to configuration: inout LedgerConfiguration) {
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if let publicBaseURL { configuration.publicBaseURL = publicBaseURL }
    }
}

/// Verifier options.
struct VerifierOptions: ParsableArguments {
    @Option(help: ArgumentHelp(Setting.verifierGroup.help("Proofs decided in one group")))
    var verifierConcurrency: Int?

    func apply(to configuration: inout LedgerConfiguration) {
        if let verifierConcurrency { configuration.verifierGroup = verifierConcurrency }
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run everything in one process: API and workers, on the embedded PostgreSQL unless a database URL is set.")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var http: HTTPOptions
    @OptionGroup var verifier: VerifierOptions

    func run() async throws {
        var configuration = try database.configuration()
        http.apply(to: &configuration)
        verifier.apply(to: &configuration)
        let signer = try SigningKey.resolve(configuration).signer
        let witnesses = try configuration.witnessPolicy.map { try WitnessClient.policy(file: $0, log: signer.verifier) }
        try await Role(name: "serve", configuration: configuration, migrate: true).run { context in
            let (authority, onRunning) = try await context.authority(printGeneratedToken: true, verifierKey: signer.verifier.text)
            return LedgerServer.allInOne(
                client: context.client, store: context.store, authority: authority, configuration: configuration,
                signer: signer, witnesses: witnesses, publishedFile: configuration.checkpointFileURL,
                standby: context.standby, logger: context.logger, onRunning: onRunning)
        }
    }
}

struct API: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Run the HTTP API only; proofs are decided by `ledger verifier` workers (the schema must be current: run `ledger migrate`).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var http: HTTPOptions

    func run() async throws {
        var configuration = try database.configuration()
        http.apply(to: &configuration)
        try await Role(name: "api", configuration: configuration, migrate: false).run { context in
            let (authority, onRunning) = try await context.authority(printGeneratedToken: false)
            return LedgerServer.apiOnly(
                client: context.client, store: context.store, authority: authority, configuration: configuration,
                standby: context.standby, logger: context.logger, onRunning: onRunning)
        }
    }
}

struct Verifier: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verifier",
        abstract: "Run a verifier worker: decide stored proof requests (any number may run; the schema must be current).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var verifier: VerifierOptions

    func run() async throws {
        var configuration = try database.configuration()
        verifier.apply(to: &configuration)
        try await Role(name: "verifier", configuration: configuration, migrate: false).run { context in
            LedgerServer.verifier(client: context.client, configuration: configuration, logger: context.logger)
        }
    }
}

struct Deliver: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a webhook delivery worker (any number may run: they share the webhooks with leases; the schema must be current).")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let configuration = try database.configuration()
        try await Role(name: "deliver", configuration: configuration, migrate: false).run { context in
            LedgerServer.deliverer(client: context.client, store: context.store, configuration: configuration, logger: context.logger)
        }
    }
}

struct CheckpointerRole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpointer",
        abstract: "Grow the log's Merkle tree and sign checkpoints (run one per deployment; a second one waits as a standby).")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "Base URL whose host names the log (env LEDGER_PUBLIC_BASE_URL; LEDGER_LOG_ORIGIN overrides the name).")
    var publicBaseURL: String?

    func run() async throws {
        var configuration = try database.configuration()
        if let publicBaseURL { configuration.publicBaseURL = publicBaseURL }
        let signer = try SigningKey.resolve(configuration).signer
        let witnesses = try configuration.witnessPolicy.map { try WitnessClient.policy(file: $0, log: signer.verifier) }
        try await Role(name: "checkpointer", configuration: configuration, migrate: false).run { context in
            LedgerServer.checkpointer(
                client: context.client, signer: signer, witnesses: witnesses, publishedFile: configuration.checkpointFileURL,
                logger: context.logger)
        }
    }
}

/// One process role: connect (embedded PostgreSQL unless a URL is set), migrate or check the
/// schema, then run its services in one ServiceGroup. On SIGTERM/SIGINT the services stop in
/// reverse order (HTTP server first, workers next), then the client, then the embedded cluster.
struct Role {
    /// The role's name: with the process id, the `application_name` of its connections.
    let name: String
    let configuration: LedgerConfiguration
    let migrate: Bool
    let maxConnections = 40

    struct Context {
        let client: PostgresClient
        let store: EventStore
        let logger: Logger
        let configuration: LedgerConfiguration
        /// A hot standby's pool for the API's reads (`LEDGER_READ_DATABASE_URL`), if set.
        let standby: PostgresClient?

        /// The token authority (a development secret is generated into the data folder if none
        /// is configured) and what to do once the server listens: print a development token.
        func authority(
            printGeneratedToken: Bool, verifierKey: String? = nil
        ) async throws -> (TokenAuthority, @Sendable (Int) async -> Void) {
            let (authority, generated) = try await Tokens.authority(configuration, createIfMissing: true)
            let dataDir = configuration.dataDirectory.path
            return (authority, { _ in
                // Unbuffered: the key and the token must show even when stdout is a file.
                if let verifierKey {
                    FileHandle.standardOutput.write(Data("""
                        checkpoint verifier key (keep a copy: auditors check checkpoints with it):
                          export LEDGER_LOG_KEY=\(verifierKey)

                        """.utf8))
                }
                guard generated && printGeneratedToken, let token = try? await authority.issue(account: "dev") else { return }
                FileHandle.standardOutput.write(Data("""
                    development token (account dev; secret in \(dataDir)/jwt-secret):
                      export TOKEN=\(token)

                    """.utf8))
            })
        }
    }

    /// Roles that check tokens beside others on one database (`ledger api`): each must check the
    /// same ones, so a key generated for one process alone would split them. The projector,
    /// verifier, deliverer and checkpointer check no token, and need no key.
    var needsTokenKey: Bool { name == "api" }

    func run(_ services: (Context) async throws -> [any Service]) async throws {
        if needsTokenKey, configuration.databaseURL != nil, !configuration.tokenKeysConfigured {
            throw ValidationError(
                "refusing to start: `ledger \(name)` with a database URL needs the deployment's token keys, LEDGER_JWT_SECRET or LEDGER_JWKS_URL/LEDGER_JWKS_FILE (every API instance must accept the others' tokens)")
        }
        let logger = Logs.bootstrap(configuration)
        LedgerMetrics.bootstrap()
        let (owner, embedded) = try await configuration.connect(logger: logger)
        try await stopping(embedded) {
            // Least privilege: migrations with the configured (owning) credentials, before the
            // services connect; on the embedded cluster the services then connect as ledger_app.
            if migrate {
                let applied = try await owner.withClient(logger: logger) { try await Migrator(client: $0, logger: logger).migrate() }
                if !applied.isEmpty { logger.info("migrations applied", metadata: ["names": "\(applied)"]) }
            }
            let settings = try await embedded?.serviceSettings(owner: owner) ?? owner
            let applicationName = "ledger \(name) \(ProcessInfo.processInfo.processIdentifier)"
            let client = settings.makeClient(logger: logger, maxConnections: maxConnections, applicationName: applicationName)
            let standby = try configuration.readDatabaseURL.map {
                try DatabaseSettings(url: $0).makeClient(logger: logger, maxConnections: maxConnections, applicationName: applicationName)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                if let standby { group.addTask { await standby.run() } }
                defer { group.cancelAll() }
                try await Migrator(client: client, logger: logger).ensureCurrent()
                if configuration.publicEntries, let refusal = try await PrivacyFormat(client: client, logger: logger).publicEntriesRefusal() {
                    throw ValidationError(refusal)
                }
                let context = Context(
                    client: client, store: EventStore(client: client, logger: logger), logger: logger, configuration: configuration,
                    standby: standby)
                var configuration = ServiceGroupConfiguration(
                    services: ([
                        DatabasePoolMetrics(
                            client: client, applicationName: applicationName, maxConnections: maxConnections, logger: logger),
                        DatabaseWatchdog(client: client, logger: logger),
                    ] + (try await services(context))).map { .init(service: $0) },
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
                // In-flight work gets 30 s to finish after SIGTERM, then it is cancelled (a
                // transaction cut short rolls back: nothing half-done remains).
                configuration.maximumGracefulShutdownDuration = .seconds(30)
                configuration.maximumCancellationDuration = .seconds(5)
                try await ServiceGroup(configuration: configuration).run()
            }
        }
    }
}
