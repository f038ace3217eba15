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

    /// Whether the availability says yes after its probes ran while the pool's only connection slept.
    static func available(reachable: (@Sendable () async -> Bool)?) async throws -> Bool {
        let settings = try await TestCluster.shared.makeDatabase()
        return try await settings.withClient(logger: logger, maxConnections: 1) { client in
            let availability = DatabaseAvailability(
                client: client, shard: "test", interval: .milliseconds(50), deadline: .milliseconds(200), reachable: reachable,
                logger: logger)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.query("SELECT pg_sleep(3)") }  // the one lease, taken
                group.addTask { try await availability.run() }
                // Enough probes to miss twice in a row, each waiting out its deadline.
                let deadline = ContinuousClock.now + .seconds(2)
                while ContinuousClock.now < deadline && availability.isAvailable { try await Task.sleep(for: .milliseconds(50)) }
                let answer = availability.isAvailable
                group.cancelAll()
                return answer
            }
        }
    }

    @Test("a busy pool whose server answers a new connection stays available; without that check, or unreachable, it is refused")
    func busyIsNotDown() async throws {
        let asked = Atomic<Int>(0)
        #expect(
            try await Self.available(reachable: {
                asked.add(1, ordering: .relaxed)
                return true
            }), "busy, reachable: up")
        #expect(asked.load(ordering: .relaxed) >= 2, "the probes hung and asked the server at least twice")
        #expect(!(try await Self.available(reachable: { false })), "hung and unreachable: down")
        #expect(!(try await Self.available(reachable: nil)), "hung, with nothing to tell busy from down: down")
    }
}
