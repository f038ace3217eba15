import ArgumentParser
import Foundation
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerStore
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
        let host = host ?? Environment.value("LEDGER_HOST") ?? "127.0.0.1"
        let port = try port ?? Environment.value("LEDGER_PORT").map {
            guard let p = Int($0) else { throw ValidationError("LEDGER_PORT must be a number") }
            return p
        } ?? 8080
        var configuration = APIConfiguration(
            host: host, port: port, publicBaseURL: publicBaseURL ?? Environment.value("LEDGER_PUBLIC_BASE_URL"))
        if let limit = Environment.value("LEDGER_BODY_LIMIT").flatMap(Int.init) { configuration.bodyLimit = limit }
        if let seconds = Environment.value("LEDGER_CHALLENGE_TTL").flatMap(Double.init) { configuration.challengeLifetime = seconds }
        return configuration
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run everything in one process: API and workers, on the embedded PostgreSQL unless a database URL is set.")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var http: HTTPOptions

    func run() async throws {
        try await APIRole(database: database, http: http, migrate: true).run()
    }
}

struct API: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api", abstract: "Run the HTTP API only (the schema must be current: run `ledger migrate`).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var http: HTTPOptions

    func run() async throws {
        try await APIRole(database: database, http: http, migrate: false).run()
    }
}

/// Postgres client first, then the HTTP server: they stop in reverse order on SIGTERM/SIGINT.
struct APIRole {
    let database: DatabaseOptions
    let http: HTTPOptions
    let migrate: Bool

    func run() async throws {
        let logger = Logs.bootstrap()
        let configuration = try http.configuration()
        let (secret, generated) = try JWTSecret.resolve(dataDir: database.resolvedDataDir, createIfMissing: true)
        let authority = try await TokenAuthority(secret: secret)
        let (settings, embedded) = try await database.connect(logger: logger)
        try await stopping(embedded) {
            let client = settings.makeClient(logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                let migrator = try Migrator(client: client, logger: logger)
                if migrate {
                    let applied = try await migrator.migrate()
                    if !applied.isEmpty { logger.info("migrations applied", metadata: ["names": "\(applied)"]) }
                } else {
                    try await migrator.ensureCurrent()
                }
                let store = PostgresEventStore(client: client, logger: logger)
                let router = buildRouter(client: client, store: store, authority: authority, configuration: configuration, logger: logger)
                let app = Application(
                    router: router,
                    configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "participant-ledger"),
                    onServerRunning: { _ in
                        logger.info("ledger listening", metadata: ["url": "http://\(configuration.host):\(configuration.port)"])
                        if generated, let token = try? await authority.issue(account: "dev") {
                            // Unbuffered: the token must show even when stdout is a file.
                            FileHandle.standardOutput.write(Data("""
                                development token (account dev; secret in \(database.resolvedDataDir.path)/jwt-secret):
                                  export TOKEN=\(token)

                                """.utf8))
                        }
                    },
                    logger: logger)
                let services = ServiceGroup(
                    configuration: .init(services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
                try await services.run()
            }
        }
    }
}

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a bearer token for the configured secret.")

    @Option(help: "Account id (the token's sub).") var account: String
    @Option(help: "Role to include, e.g. auditor.") var role: [String] = []
    @Option(help: "Days the token stays valid.") var days: Double = 30
    @Option(name: .long, help: "Data folder holding the development secret (env LEDGER_DATA_DIR, default ./.ledger).") var dataDir: String?

    func run() async throws {
        var options = DatabaseOptions()
        options.dataDir = dataDir
        let (secret, _) = try JWTSecret.resolve(dataDir: options.resolvedDataDir, createIfMissing: false)
        print(try await TokenAuthority(secret: secret).issue(account: account, roles: role, validFor: days * 86400))
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Logs.bootstrap()
        let (settings, embedded) = try await database.connect(logger: logger)
        let applied = try await stopping(embedded) {
            try await withDatabase(settings, logger: logger) { client in
                try await Migrator(client: client, logger: logger).migrate()
            }
        }
        print(applied.isEmpty ? "schema is up to date" : "applied: \(applied.joined(separator: ", "))")
    }
}

struct Log: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect the event log.", subcommands: [Verify.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Walk the hash chain from the first event; exit non-zero naming the first position that does not match.")

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let logger = Logs.bootstrap()
            let (settings, embedded) = try await database.connect(logger: logger)
            let report = try await stopping(embedded) {
                try await withDatabase(settings, logger: logger) { client in
                    let store = PostgresEventStore(client: client, logger: logger)
                    return try await LogVerification(store: store).run()
                }
            }
            if let failure = report.failure {
                print("log verify: FAILED at position \(failure.position): \(failure)")
                print("events verified before the break: \(report.checked)")
                throw ExitCode(2)
            }
            print("log verify: OK, \(report.checked) events, head position \(report.headPosition)")
        }
    }
}
