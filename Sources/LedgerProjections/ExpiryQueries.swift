import Foundation
import LedgerPostgres
import Logging
import PostgresNIO

/// What the expiry service and the status page read of the membership projection: which
/// collaborations have a window due, when the next one falls due, how far the projection has
/// folded, and how many windows are overdue (the status: Migrations/functions/
/// ledger_next_expiry.sql, ledger_expiry_overdue.sql).
public struct ExpiryQueries: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    struct Round {
        /// Collaborations with a window due at the round's time.
        var collaborations: [String] = []
        /// The earliest `notAfter` still pending.
        var next: Date?
        /// The membership projection's position.
        var projected: Int64 = 0
    }

    /// One statement on the lease holder's connection, leaving out `excluded` (collaborations the
    /// service has decided and the projection has not folded yet): the collaborations with a
    /// window due at `now` (most overdue first), the earliest end still pending, and the
    /// projection's position. Both walk `proj_members_due` in `not_after` order.
    func due(at now: Date, excluding excluded: [String], limit: Int, on connection: PostgresConnection) async throws -> Round {
        var round = Round()
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT NULL::text, (SELECT position FROM ledger_projections WHERE name = 'membership'),
                   (extract(epoch FROM (
                       SELECT m.not_after FROM proj_members m
                       WHERE m.not_after IS NOT NULL AND m.state IN ('invited', 'granted') AND m.collaboration_id <> ALL(\(excluded))
                       ORDER BY m.not_after LIMIT 1)) * 1000000)::int8
            UNION ALL
            (SELECT m.collaboration_id, NULL, NULL FROM proj_members m
             WHERE m.not_after IS NOT NULL AND m.state IN ('invited', 'granted') AND m.not_after <= \(now)
               AND m.collaboration_id <> ALL(\(excluded))
             GROUP BY m.collaboration_id ORDER BY min(m.not_after) LIMIT \(Int32(limit)))
            """, logger: logger)
        for try await (collaboration, projected, next) in rows.decode((String?, Int64?, Int64?).self) {
            if let collaboration {
                round.collaborations.append(collaboration)
            } else {
                round.projected = projected ?? 0
                round.next = next.map { Date(timeIntervalSince1970: Double($0) / 1_000_000) }
            }
        }
        return round
    }

    /// The expiry service as the log-health page shows it: whether an instance holds the lease,
    /// the next `dueAt`, and how many windows are more than a second overdue.
    public func status() async throws -> (running: Bool, next: Date?, overdue: Int64) {
        let running = try await AdvisoryLease(key: ExpiryService.leaseKey, client: client, logger: logger).isHeld()
        return try await client.queryUnlessClosed(
            "SELECT (extract(epoch FROM ledger_next_expiry()) * 1000000)::int8, ledger_expiry_overdue(now())", logger: logger
        ) { rows in
            for try await (next, overdue) in rows.decode((Int64?, Int64).self) {
                return (running, next.map { Date(timeIntervalSince1970: Double($0) / 1_000_000) }, overdue)
            }
            return (running, nil, 0)
        }
    }
}
