import LedgerStore
import Logging
import PostgresNIO

/// A session that is not the expiry service holding the service's lease (an advisory lock any
/// database login can take, SPEC "Time-bound access"): no window of that database expires while
/// it holds it, and the windows it holds back show as overdue.
public enum ExpirySquatter {
    /// `body` while a session named `squatter` of `client`'s database holds the lease: the
    /// service's own session is ended, and the lock taken before the service asks again (it waits
    /// a second). Advisory locks are per database: only this database's service is held back.
    public static func holding<T: Sendable>(
        _ client: PostgresClient, _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let key = ExpiryService.leaseKey
        let logger = Logger(label: "squatter")
        return try await client.withConnection { squat in
            try await squat.query("SET application_name = 'squatter'", logger: logger)
            var mine: Int32 = 0
            for try await pid in try await squat.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) { mine = pid }
            var held = false
            let deadline = ContinuousClock.now + .seconds(30)
            while !held, ContinuousClock.now < deadline {
                _ = try await squat.query(
                    """
                    SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
                      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND ((l.classid::int8 << 32) | l.objid::int8) = \(key) AND l.objsubid = 1 AND l.pid <> \(mine)
                    """, logger: logger)
                for try await locked in try await squat.query("SELECT pg_try_advisory_lock(\(key))", logger: logger).decode(Bool.self) {
                    held = locked
                }
            }
            guard held else { throw Unheld() }
            return try await body(squat)
        }
    }

    public struct Unheld: Error, CustomStringConvertible {
        public var description: String { "the squatter never got the expiry lease within 30 s" }
    }
}
