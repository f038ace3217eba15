import ArgumentParser
import Foundation
import LedgerDomain
import LedgerStore
import Logging
import PostgresNIO
import ServiceLifecycle
import UnixSignals

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run everything in one process (embedded PostgreSQL unless a database URL is set).")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Logs.bootstrap()
        let (settings, embedded) = try await database.connect(logger: logger)
        try await stopping(embedded) {
            try await withDatabase(settings, logger: logger) { client in
                // All-in-one: bring the schema up to date before serving.
                let applied = try await Migrator(client: client, logger: logger).migrate()
                if !applied.isEmpty { logger.info("migrations applied", metadata: ["names": "\(applied)"]) }
                logger.info("ledger ready", metadata: ["database": "\(settings)"])
                let group = ServiceGroup(
                    services: [WaitForShutdown()],
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger)
                try await group.run()
            }
        }
    }
}

/// Holds the group open until a shutdown signal arrives.
struct WaitForShutdown: Service {
    func run() async throws {
        try? await gracefulShutdown()
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
