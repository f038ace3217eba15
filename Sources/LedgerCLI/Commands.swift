import ArgumentParser
import Foundation
import LedgerAPI
import LedgerDomain
import LedgerStore
import Logging
import PostgresNIO

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
        let applied = try await database.withClient { client, logger in
            try await Migrator(client: client, logger: logger).migrate()
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
            let report = try await database.withClient { client, logger in
                let store = PostgresEventStore(client: client, logger: logger)
                return try await LogVerification(store: store).run()
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
