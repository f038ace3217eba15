import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO

/// The projections the ledger keeps. Each is a SQL function in `Migrations/sql` that applies
/// a position range of the log to its tables, set-based; the Swift side owns leases,
/// checkpoints, wake-ups, errors and rebuilds. The functions name their tables without a
/// schema: a rebuild's connections find the fresh copies in `ledger_rebuild` first.
public enum Projection: String, CaseIterable, Sendable {
    case collaborations, membership, highlights

    /// `SELECT ledger_project_<name>($from, $to)`, for rebuilds; a worker's step calls the same
    /// functions from `ledger_project_step` (Migrations/functions), whose list changes with this one.
    func apply(from: Int64, to: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        let query: PostgresQuery =
            switch self {
            case .collaborations: "SELECT ledger_project_collaborations(\(from), \(to))"
            case .membership: "SELECT ledger_project_membership(\(from), \(to))"
            case .highlights: "SELECT ledger_project_highlights(\(from), \(to))"
            }
        try await Self.call(query, on: connection, logger: logger)
    }

    /// Runs a projection function, draining its result: a failure of the function surfaces
    /// while reading it.
    private static func call(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws {
        for try await _ in try await connection.queryUnlessClosed(query, logger: logger) {}
    }

    /// A rebuild's pass over a range into fresh tables without indexes: everything `apply`
    /// does, except membership's fold onto the members, which `finishBulk` does once.
    /// Ranges may be applied in any order and concurrently.
    func applyBulk(from: Int64, to: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        guard case .membership = self else {
            return try await apply(from: from, to: to, on: connection, logger: logger)
        }
        try await Self.call("SELECT ledger_project_access_history(\(from), \(to))", on: connection, logger: logger)
    }

    /// The table `finishBulk` fills: its indexes are built after it, the others' before.
    var foldedTable: String? { self == .membership ? "proj_members" : nil }

    /// Completes the bulk passes over (0, to]: part `part` of `parts` (run all parts, on as
    /// many connections) of what `applyBulk` left out.
    func finishBulk(to: Int64, part: Int, parts: Int, on connection: PostgresConnection, logger: Logger) async throws {
        guard case .membership = self else { return }
        try await Self.call(
            "SELECT ledger_fold_all_members(\(to), \(Int32(part)), \(Int32(parts)))", on: connection, logger: logger)
    }
}

/// One projection's row in `ledger_projections`, with its lag behind the log.
public struct ProjectionStatus: Sendable, Equatable {
    public var name: String
    public var position: Int64
    public var head: Int64
    public var lagEvents: Int64 { max(0, head - position) }
    /// Age of the oldest event not yet applied (0 when caught up).
    public var lagSeconds: Double
    public var owner: String?
    public var leaseValid: Bool
    public var status: String
    public var error: String?
    public var errorPosition: Int64?
}

public enum ProjectionQueries {
    /// The head as a scalar subquery, not a join: on a database whose small tables have no
    /// statistics yet (the first minute of a new one, before autovacuum's ANALYZE), the planner
    /// took both for about a thousand rows, estimated the join at over 4 million, and
    /// PostgreSQL JIT-compiled the statement: ~190 ms for three rows, every time the projector
    /// workers report their lag.
    static let statusSQL = """
        SELECT p.name, p.position, (SELECT h.position FROM ledger_head h), p.owner, coalesce(p.lease_until > now(), false),
               p.status, p.error, p.error_position,
               coalesce(extract(epoch FROM now() - (SELECT recorded_at FROM ledger_events e WHERE e.position = p.position + 1)), 0)::float8
        FROM ledger_projections p
        ORDER BY p.name
        """

    public static func status(client: PostgresClient, logger: Logger) async throws -> [ProjectionStatus] {
        try await client.queryUnlessClosed(PostgresQuery(unsafeSQL: statusSQL), logger: logger) { rows in
            var result: [ProjectionStatus] = []
            for try await (name, position, head, owner, leaseValid, status, error, errorPosition, lagSeconds)
                in rows.decode((String, Int64, Int64, String?, Bool, String, String?, Int64?, Double).self)
            {
                result.append(
                    ProjectionStatus(
                        name: name, position: position, head: head, lagSeconds: lagSeconds, owner: owner, leaseValid: leaseValid,
                        status: status, error: error, errorPosition: errorPosition))
            }
            return result
        }
    }

    /// The lowest checkpoint among `projections`: every view named has applied the log up to it.
    public static func position(of projections: [Projection], client: PostgresClient, logger: Logger) async throws -> Int64 {
        try await client.queryUnlessClosed(
            "SELECT coalesce(min(position), 0) FROM ledger_projections WHERE name = ANY(\(projections.map(\.rawValue)))",
            logger: logger
        ) { rows in
            for try await position in rows.decode(Int64.self) { return position }
            return 0
        }
    }

    /// Waits (bounded) until the views have reached `minPosition`; returns where they are.
    public static func waitFor(
        _ minPosition: Int64?, projections: [Projection], client: PostgresClient, logger: Logger, timeout: Duration = .seconds(2)
    ) async throws -> Int64 {
        let deadline = ContinuousClock.now + timeout
        while true {
            let position = try await position(of: projections, client: client, logger: logger)
            guard let minPosition, position < minPosition, ContinuousClock.now < deadline else { return position }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
