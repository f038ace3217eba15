import Foundation
import LedgerPostgres
import Logging
import PostgresNIO

/// What the expiry service and the status page read of the membership projection: which
/// collaborations have a window due, when the next one falls due, how far the projection has
/// folded, and how many windows are overdue (Migrations/functions/ledger_due_expiries.sql,
/// ledger_next_expiry.sql).
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

    /// One statement on the lease holder's connection.
    func due(at now: Date, limit: Int, on connection: PostgresConnection) async throws -> Round {
        var round = Round()
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT NULL::text, (SELECT position FROM ledger_projections WHERE name = 'membership'),
                   (extract(epoch FROM ledger_next_expiry()) * 1000000)::int8
            UNION ALL
            SELECT d.collaboration_id, NULL, NULL FROM ledger_due_expiries(\(now), \(Int32(limit))) d
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
