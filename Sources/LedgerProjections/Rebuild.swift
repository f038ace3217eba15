import Foundation
import LedgerStore
import Logging
import PostgresNIO

/// Replays the whole log into fresh copies of a projection's tables (suffix `_next`) while
/// the current ones keep serving, then swaps them in one transaction and drops the old ones.
///
/// The swap transaction locks the projection's row (the live worker's next batch waits),
/// brings the copy up to the live checkpoint, renames the tables and clears a stop, so the
/// worker carries on from the same checkpoint, now on the rebuilt tables.
public struct ProjectionRebuild: Sendable {
    let client: PostgresClient
    let logger: Logger
    let chunk: Int64

    public init(client: PostgresClient, logger: Logger, chunk: Int64 = 50_000) {
        self.client = client
        self.logger = logger
        self.chunk = chunk
    }

    public struct Progress: Sendable {
        public var done: Int64
        public var total: Int64
        public var elapsed: Duration
    }

    public struct Report: Sendable {
        public var events: Int64
        public var elapsed: Duration
        public var position: Int64
    }

    public func run(_ projection: Projection, progress: @Sendable (Progress) -> Void = { _ in }) async throws -> Report {
        let tables = try await tables(of: projection)
        try await client.withConnection { connection in
            for table in tables {
                try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \(table)_next"), logger: logger)
                try await connection.query(
                    PostgresQuery(unsafeSQL: "CREATE UNLOGGED TABLE \(table)_next (LIKE \(table) INCLUDING ALL)"), logger: logger)
            }
        }
        let started = ContinuousClock.now
        var done: Int64 = 0
        // Catch up in chunks while the log keeps growing; stop chasing when close.
        while true {
            let head = try await head()
            if head - done <= chunk / 10 { break }
            while done < head {
                let to = min(head, done + chunk)
                try await client.withConnection { connection in
                    try await projection.apply(from: done, to: to, suffix: "_next", on: connection, logger: logger)
                }
                done = to
                progress(Progress(done: done, total: head, elapsed: ContinuousClock.now - started))
            }
        }
        // Swap under the projection's row lock.
        let position: Int64
        do {
            position = try await client.withTransaction(logger: logger) { connection in
                let rows = try await connection.query(
                    "SELECT position FROM ledger_projections WHERE name = \(projection.rawValue) FOR UPDATE", logger: logger)
                var live: Int64 = 0
                for try await p in rows.decode(Int64.self) { live = p }
                let target = max(live, done)
                if target > done {
                    try await projection.apply(from: done, to: target, suffix: "_next", on: connection, logger: logger)
                }
                for table in tables {
                    try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table)_next SET LOGGED"), logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table) RENAME TO \(table)_old"), logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table)_next RENAME TO \(table)"), logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)_old"), logger: logger)
                }
                try await connection.query(
                    """
                    UPDATE ledger_projections
                    SET position = \(target), status = 'running', error = NULL, error_position = NULL, updated_at = now()
                    WHERE name = \(projection.rawValue)
                    """, logger: logger)
                return target
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error.commitError ?? error
        }
        return Report(events: position, elapsed: ContinuousClock.now - started, position: position)
    }

    private func head() async throws -> Int64 {
        let rows = try await client.query("SELECT position FROM ledger_head", logger: logger)
        for try await position in rows.decode(Int64.self) { return position }
        return 0
    }

    private func tables(of projection: Projection) async throws -> [String] {
        let rows = try await client.query("SELECT ledger_projection_tables(\(projection.rawValue))", logger: logger)
        for try await tables in rows.decode([String].self) {
            // Table names come from the migration's fixed list; check them anyway before they go into DDL.
            guard tables.allSatisfy({ $0.allSatisfy { $0.isLowercase || $0 == "_" } }) else {
                throw StoreError.invalidRequest("unexpected table name in \(tables)")
            }
            return tables
        }
        throw StoreError.invalidRequest("unknown projection \(projection.rawValue)")
    }
}
