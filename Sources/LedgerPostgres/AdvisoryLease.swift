import Logging
import PostgresNIO

/// A lease one session holds among every process on the database: a session advisory lock. The
/// checkpointer's and the expiry service's (one signer, one expirer).
public struct AdvisoryLease: Sendable {
    /// Any number serves, as long as each lease has its own, the same everywhere.
    public let key: Int64
    let client: PostgresClient
    let logger: Logger

    public init(key: Int64, client: PostgresClient, logger: Logger) {
        self.key = key
        self.client = client
        self.logger = logger
    }

    /// Runs `body` on a connection holding the lease; returns at once, without running it, while
    /// another session holds it. The lock belongs to the session and the connection goes back to
    /// the pool: it is given up however `body` ends (a closed connection has already lost it).
    public func withLease(_ body: (PostgresConnection) async throws -> Void) async throws {
        try await client.withConnection { connection in
            var locked = false
            for try await held in try await connection.queryUnlessClosed(
                "SELECT pg_try_advisory_lock(\(key))", logger: logger
            ).decode(Bool.self) { locked = held }
            guard locked else { return }
            do {
                try await body(connection)
            } catch {
                _ = try? await connection.queryUnlessClosed("SELECT pg_advisory_unlock(\(key))", logger: logger)
                throw error
            }
            _ = try? await connection.queryUnlessClosed("SELECT pg_advisory_unlock(\(key))", logger: logger)
        }
    }

    /// Whether some session on this database holds the lease now (for status pages; it may
    /// change at once).
    public func isHeld() async throws -> Bool {
        try await client.queryUnlessClosed(
            """
            SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                             AND ((classid::int8 << 32) | objid::int8) = \(key) AND objsubid = 1)
            """, logger: logger
        ) { rows in
            for try await held in rows.decode(Bool.self) { return held }
            return false
        }
    }

    /// The `application_name` of the session holding the lease on this database, if one does
    /// (`ledger <role> <pid>`: which process it is).
    public func holder() async throws -> String? {
        try await client.queryUnlessClosed(
            """
            SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND ((l.classid::int8 << 32) | l.objid::int8) = \(key) AND l.objsubid = 1
            """, logger: logger
        ) { rows in
            for try await name in rows.decode(String?.self) { return name }
            return nil
        }
    }
}
