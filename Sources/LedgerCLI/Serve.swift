import ArgumentParser
import Foundation
import LedgerApp
import LedgerConfiguration
import LedgerLog
import LedgerPostgres
import LedgerShards
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import Logging
import TransparencyLog

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
    @Option(help: ArgumentHelp(Setting.shardCluster.help("PL/Proxy cluster whose shards hold the collaborations")))
    var shardCluster: String?

    func run() async throws {
        var configuration = try database.configuration()
        http.apply(to: &configuration)
        verifier.apply(to: &configuration)
        if let shardCluster { configuration.shardCluster = shardCluster }
        let signer = try SigningKey.resolve(configuration).signer
        let witnesses = try configuration.witnessPolicy.map { try WitnessClient.policy(file: $0, log: signer.verifier) }
        try await Role(.serve, configuration: configuration, migrate: true, signer: signer, witnesses: witnesses).run()
    }
}

struct API: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract:
            "Run the HTTP API only; proofs are decided by `ledger verifier` workers (the schema must be current: run `ledger migrate`).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var http: HTTPOptions

    func run() async throws {
        var configuration = try database.configuration()
        http.apply(to: &configuration)
        try await Role(.api, configuration: configuration).run()
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
        try await Role(.verifier, configuration: configuration).run()
    }
}

struct Deliver: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a webhook delivery worker (any number may run: they share the webhooks with leases; the schema must be current).")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await Role(.deliver, configuration: try database.configuration()).run()
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
        try await Role(.checkpointer, configuration: configuration, signer: signer, witnesses: witnesses).run()
    }
}

/// What the command line adds to a `LedgerProcess`: the connection (embedded PostgreSQL unless
/// a URL is set), the migrations (`ledger serve` only; other roles need a current schema), the
/// token keys, and the process's logs and metrics. On SIGTERM/SIGINT the process stops, then the
/// embedded cluster.
struct Role {
    let role: LedgerProcess.Role
    let configuration: LedgerConfiguration
    let migrate: Bool
    let signer: NoteSigner?
    let witnesses: WitnessPolicy?

    init(
        _ role: LedgerProcess.Role, configuration: LedgerConfiguration, migrate: Bool = false, signer: NoteSigner? = nil,
        witnesses: WitnessPolicy? = nil
    ) {
        (self.role, self.configuration, self.migrate, self.signer, self.witnesses) = (role, configuration, migrate, signer, witnesses)
    }

    /// Roles that check tokens beside others on one database (`ledger api`): each must check the
    /// same ones, so a key generated for one process alone would split them. The projector,
    /// verifier, deliverer and checkpointer check no token, and need no key.
    var needsTokenKey: Bool { role == .api }

    func run() async throws {
        if role != .serve, configuration.shardCluster != nil {
            throw ValidationError(
                "refusing to start: LEDGER_SHARD_CLUSTER is for `ledger serve` alone; `ledger \(role.rawValue)` on shards is not built yet (docs/SCALING.md)"
            )
        }
        if needsTokenKey, configuration.databaseURL != nil, !configuration.tokenKeysConfigured {
            throw ValidationError(
                "refusing to start: `ledger \(role.rawValue)` with a database URL needs the deployment's token keys, LEDGER_JWT_SECRET or LEDGER_JWKS_URL/LEDGER_JWKS_FILE (every API instance must accept the others' tokens)"
            )
        }
        let logger = Logs.bootstrap(configuration)
        LedgerMetrics.bootstrap()
        let (owner, embedded) = try await configuration.connect(logger: logger)
        try await stopping(embedded) {
            // Least privilege: migrations with the configured (owning) credentials, before the
            // services connect (on shards, each shard's as it joins: `ShardJoin`); on the embedded
            // cluster the services then connect as ledger_app.
            if migrate {
                let applied = try await DatabaseFailure.explaining("applying the migrations", on: owner) {
                    try await owner.withClient(logger: logger) { try await Migrator(client: $0, logger: logger).migrate() }
                }
                if !applied.isEmpty { logger.info("migrations applied", metadata: ["names": "\(applied)"]) }
            }
            let services = try await DatabaseFailure.explaining("setting up the services' login ledger_app", on: owner) {
                try await embedded?.serviceSettings(owner: owner)
            }
            var process = LedgerProcess(
                role, configuration: configuration, database: services ?? owner,
                standby: try configuration.readDatabaseURL.map { try DatabaseSettings(url: $0) }, signer: signer, witnesses: witnesses)
            if role == .serve {
                process.shardCluster = configuration.shardCluster
                // Each shard is migrated as it joins, so one down at start stops only its own.
                if migrate { process.shardOwner = owner }
            }
            var onRunning: @Sendable (Int) async -> Void = { _ in }
            if role.servesHTTP {
                let (authority, generated) = try await Tokens.authority(configuration, createIfMissing: true)
                process.authority = authority
                // On shards each shard's log has a key of its own, logged as it starts.
                let key = configuration.shardCluster == nil ? signer?.verifier.text : nil
                onRunning = announce(authority: authority, generated: generated && role == .serve, verifierKey: key)
            }
            do {
                try await process.run(logger: logger, onRunning: onRunning)
            } catch let refused as LedgerProcess.Incomplete {
                throw ValidationError(refused.description)
            }
        }
    }

    /// Once the server listens: the checkpoint verifier key, and a development token when the
    /// secret was generated here. Unbuffered: they must show even when stdout is a file.
    func announce(authority: TokenAuthority, generated: Bool, verifierKey: String?) -> @Sendable (Int) async -> Void {
        let dataDir = configuration.dataDirectory.path
        return { _ in
            if let verifierKey {
                FileHandle.standardOutput.write(
                    Data(
                        """
                        checkpoint verifier key (keep a copy: auditors check checkpoints with it):
                          export LEDGER_LOG_KEY=\(verifierKey)

                        """.utf8))
            }
            guard generated, let token = try? await authority.issue(account: "dev") else { return }
            FileHandle.standardOutput.write(
                Data(
                    """
                    development token (account dev; secret in \(dataDir)/jwt-secret):
                      export TOKEN=\(token)

                    """.utf8))
        }
    }
}
