import ArgumentParser
import Foundation
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerVerifier
import LedgerWebhooks
import Logging
import PostgresNIO
import ServiceLifecycle
import UnixSignals

/// HTTP options: flag, then environment, then default.
struct HTTPOptions: ParsableArguments {
    @Option(help: "Address to listen on (env LEDGER_HOST, default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on (env LEDGER_PORT, default 8080).") var port: Int?
    @Option(help: "Base URL of universal links (env LEDGER_PUBLIC_BASE_URL, default http://HOST:PORT).") var publicBaseURL: String?

    func configuration() throws -> APIConfiguration {
        let host = host ?? LedgerSettings.value("LEDGER_HOST") ?? "127.0.0.1"
        let port = port ?? LedgerSettings.count("LEDGER_PORT") ?? 8080
        var configuration = APIConfiguration(
            host: host, port: port, publicBaseURL: publicBaseURL ?? LedgerSettings.value("LEDGER_PUBLIC_BASE_URL"))
        if let limit = LedgerSettings.count("LEDGER_BODY_LIMIT") { configuration.bodyLimit = limit }
        if let lifetime = LedgerSettings.seconds("LEDGER_CHALLENGE_TTL") { configuration.challengeLifetime = lifetime.seconds }
        if let wait = LedgerSettings.seconds("LEDGER_READ_WAIT") { configuration.readWait = wait }
        if let wait = LedgerSettings.seconds("LEDGER_VERDICT_WAIT") { configuration.verdictWait = wait }
        configuration.allowHTTPWebhooks = LedgerSettings.yes("LEDGER_WEBHOOKS_ALLOW_HTTP")
        if let drain = LedgerSettings.seconds("LEDGER_SHUTDOWN_DRAIN") { configuration.shutdownDrain = drain }
        return configuration
    }
}

/// Verifier worker options.
struct VerifierOptions: ParsableArguments {
    @Option(help: "Requests one verifier process decides at once (env LEDGER_VERIFIER_CONCURRENCY, default 8).")
    var verifierConcurrency: Int?

    var concurrency: Int {
        verifierConcurrency ?? LedgerSettings.count("LEDGER_VERIFIER_CONCURRENCY") ?? 8
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run everything in one process: API and workers, on the embedded PostgreSQL unless a database URL is set.")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var http: HTTPOptions
    @OptionGroup var verifier: VerifierOptions

    func run() async throws {
        let configuration = try http.configuration()
        let signer = try SigningKey.resolve(
            dataDir: database.resolvedDataDir, origin: SigningKey.origin(publicBaseURL: configuration.baseURL)
        ).signer
        try await Role(name: "serve", database: database, migrate: true).run { context in
            let (authority, onRunning) = try await context.authority(printGeneratedToken: true, verifierKey: signer.verifier.text)
            return LedgerServer.allInOne(
                client: context.client, store: context.store, authority: authority, configuration: configuration,
                signer: signer, verifierConcurrency: verifier.concurrency, standby: context.standby, logger: context.logger,
                onRunning: onRunning)
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
        let configuration = try http.configuration()
        try await Role(name: "api", database: database, migrate: false).run { context in
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
        try await Role(name: "verifier", database: database, migrate: false).run { context in
            let requests = context.hub(VerifierChannels.requests)
            let decider = ProofDecider(client: context.client, store: context.store, logger: context.logger)
            context.logger.info("verifier worker running", metadata: ["concurrency": "\(verifier.concurrency)"])
            return [requests, VerifierWorker(decider: decider, requests: requests, logger: context.logger, concurrency: verifier.concurrency)]
        }
    }
}

struct Deliver: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a webhook delivery worker (any number may run: they share the webhooks with leases; the schema must be current).")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await Role(name: "deliver", database: database, migrate: false).run { context in
            let events = context.hub("ledger_events")
            return [events, WebhookDeliverer(client: context.client, store: context.store, events: events, logger: context.logger)]
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
        let base = publicBaseURL ?? LedgerSettings.value("LEDGER_PUBLIC_BASE_URL") ?? "http://localhost"
        let signer = try SigningKey.resolve(dataDir: database.resolvedDataDir, origin: SigningKey.origin(publicBaseURL: base)).signer
        try await Role(name: "checkpointer", database: database, migrate: false).run { context in
            let events = context.hub("ledger_events")
            return [events, Checkpointer(client: context.client, signer: signer, events: events, logger: context.logger)]
        }
    }
}

/// One process role: connect (embedded PostgreSQL unless a URL is set), migrate or check the
/// schema, then run its services in one ServiceGroup. On SIGTERM/SIGINT the services stop in
/// reverse order (HTTP server first, workers next), then the client, then the embedded cluster.
struct Role {
    /// The role's name: with the process id, the `application_name` of its connections.
    let name: String
    let database: DatabaseOptions
    let migrate: Bool
    let maxConnections = 40

    struct Context {
        let client: PostgresClient
        let store: PostgresEventStore
        let logger: Logger
        let database: DatabaseOptions
        /// A hot standby's pool for the API's reads (`LEDGER_READ_DATABASE_URL`), if set.
        let standby: PostgresClient?

        func hub(_ channel: String) -> NotificationHub {
            NotificationHub(client: client, channel: channel, logger: logger)
        }

        /// The token authority (a development secret is generated into the data folder if none
        /// is configured) and what to do once the server listens: print a development token.
        func authority(
            printGeneratedToken: Bool, verifierKey: String? = nil
        ) async throws -> (TokenAuthority, @Sendable (Int) async -> Void) {
            let (authority, generated) = try await Tokens.authority(dataDir: database.resolvedDataDir, createIfMissing: true)
            let dataDir = database.resolvedDataDir.path
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

    /// Roles that run beside others on one database: each must check the same tokens, so a
    /// key generated for one process alone would split them.
    var needsTokenKey: Bool { ["api", "project", "verifier", "deliver"].contains(name) }

    func run(_ services: (Context) async throws -> [any Service]) async throws {
        try LedgerSettings.check(ProcessInfo.processInfo.environment)
        if needsTokenKey, database.resolvedURL != nil, !Tokens.configured {
            throw ValidationError(
                "refusing to start: `ledger \(name)` with a database URL needs the deployment's token keys, LEDGER_JWT_SECRET or LEDGER_JWKS_URL/LEDGER_JWKS_FILE (every API instance must accept the others' tokens)")
        }
        let logger = Logs.bootstrap()
        LedgerMetrics.bootstrap()
        let (owner, embedded) = try await database.connect(logger: logger)
        try await stopping(embedded) {
            // Least privilege: migrations with the configured (owning) credentials, before the
            // services connect; on the embedded cluster the services then connect as ledger_app.
            if migrate {
                let applied = try await withDatabase(owner, logger: logger) { try await Migrator(client: $0, logger: logger).migrate() }
                if !applied.isEmpty { logger.info("migrations applied", metadata: ["names": "\(applied)"]) }
            }
            let settings = try await embedded?.serviceSettings(owner: owner) ?? owner
            let applicationName = "ledger \(name) \(ProcessInfo.processInfo.processIdentifier)"
            let client = settings.makeClient(logger: logger, maxConnections: maxConnections, applicationName: applicationName)
            let standby = try LedgerSettings.value("LEDGER_READ_DATABASE_URL").map {
                try DatabaseSettings(url: $0).makeClient(logger: logger, maxConnections: maxConnections, applicationName: applicationName)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                if let standby { group.addTask { await standby.run() } }
                defer { group.cancelAll() }
                try await Migrator(client: client, logger: logger).ensureCurrent()
                let context = Context(
                    client: client, store: PostgresEventStore(client: client, logger: logger), logger: logger, database: database,
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
