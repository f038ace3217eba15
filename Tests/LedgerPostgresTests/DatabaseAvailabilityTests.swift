import Foundation
import LedgerPostgres
import LedgerTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

/// `DatabaseAvailability` against a real PostgreSQL: a pool whose every lease stays taken (its
/// one connection in `pg_sleep`) makes each probe hang. That is a miss, and so a 503 on shards,
/// unless the server answers a new connection: then the pool is busy, not the database down.
@Suite("Database availability")
struct DatabaseAvailabilityTests {
    static let logger = Logger(label: "availability-test")

    /// Runs the availability while the pool's only connection sleeps, until `done` holds (or a
    /// minute passes), and answers whether it says the database answers.
    static func available(
        reach: (@Sendable () async -> Reach)?, until done: @escaping @Sendable (DatabaseAvailability) -> Bool
    ) async throws -> Bool {
        let settings = try await TestCluster.shared.makeDatabase()
        return try await withClient(settings) { observer in
            try await settings.withClient(logger: logger, maxConnections: 1) { client in
                let availability = DatabaseAvailability(
                    client: client, shard: "test", interval: .milliseconds(50), deadline: .milliseconds(200), reach: reach,
                    logger: logger)
                let sleeping = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'SELECT pg_sleep(600)'"
                return try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { _ = try? await client.query("SELECT pg_sleep(600)") }  // the one lease, taken
                    try await waitUntil(timeout: .seconds(60), "the pool's one connection asleep") {
                        try await observer.query(PostgresQuery(unsafeSQL: sleeping)).decode(Int32.self).reduce(0) { n, _ in n + 1 } == 1
                    }
                    group.addTask { try await availability.run() }
                    try await waitUntil(timeout: .seconds(60), "the probes' outcome") { done(availability) }
                    let answer = availability.isAvailable
                    group.cancelAll()
                    try await observer.query(PostgresQuery(unsafeSQL: "SELECT pg_terminate_backend(pid) FROM (\(sleeping)) s"))
                    return answer
                }
            }
        }
    }

    @Test("a busy pool whose server takes a new connection stays available; unchecked or unreachable, refused")
    func busyIsNotDown() async throws {
        let asked = Atomic<Int>(0)
        let busy = try await Self.available(
            reach: {
                asked.add(1, ordering: .relaxed)
                return .answers
            }, until: { _ in asked.load(ordering: .relaxed) >= 3 })
        #expect(busy, "three probes hung, the server answered each time: up")
        #expect(!(try await Self.available(reach: { .refuses }, until: { !$0.isAvailable })), "hung and refused: down")
        #expect(!(try await Self.available(reach: { .silent }, until: { !$0.isAvailable })), "hung and silent: down")
        #expect(!(try await Self.available(reach: nil, until: { !$0.isAvailable })), "hung, nothing to tell busy from down: down")
    }
}
