import Foundation
import LedgerAPI
import LedgerStore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// A ledger running inside this process (the services of `ledger serve`) on a free port, for
/// the demo and the benchmarks: the HTTP path is the real one, over loopback.
enum LocalLedger {
    struct Running: Sendable {
        let baseURL: URL
        let authority: TokenAuthority
        let client: PostgresClient
    }

    static func run<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, verifierConcurrency: Int = 8, maxConnections: Int = 40,
        _ body: @Sendable (Running) async throws -> T
    ) async throws -> T {
        try await withDatabase(settings, logger: logger, maxConnections: maxConnections) { client in
            try await Migrator(client: client, logger: logger).migrate()
            var generator = SystemRandomNumberGenerator()
            let secret = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
            let authority = try await TokenAuthority(secret: secret)
            let port = Mutex<Int?>(nil)
            // A known port, so the universal links the ledger hands out point at it.
            let chosen = try EmbeddedPostgres.freePort()
            let services = LedgerServer.allInOne(
                client: client, store: PostgresEventStore(client: client, logger: logger), authority: authority,
                configuration: .init(host: "127.0.0.1", port: chosen), verifierConcurrency: verifierConcurrency, logger: logger,
                onRunning: { bound in port.withLock { $0 = bound } })
            let group = ServiceGroup(configuration: .init(services: services.map { .init(service: $0) }, logger: logger))
            return try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                defer { tasks.cancelAll() }
                let deadline = ContinuousClock.now + .seconds(30)
                while port.withLock({ $0 }) == nil {
                    guard ContinuousClock.now < deadline else { throw LocalLedgerError.notListening }
                    try await Task.sleep(for: .milliseconds(10))
                }
                let running = Running(
                    baseURL: URL(string: "http://127.0.0.1:\(port.withLock { $0 }!)")!, authority: authority, client: client)
                let result = try await body(running)
                await group.triggerGracefulShutdown()
                try await tasks.next()
                return result
            }
        }
    }
}

enum LocalLedgerError: Error, CustomStringConvertible {
    case notListening
    var description: String { "the local ledger did not start listening within 30 s" }
}
