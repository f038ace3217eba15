import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import Logging
import PostgresNIO

/// What the expiry service and the status page read: which collaborations have a window due
/// (their stream rows' `next_due_at`), when the next one falls due, and how many windows are
/// overdue (the status: Migrations/functions/ledger_next_expiry.sql, ledger_expiry_overdue.sql).
public struct ExpiryQueries: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    struct Round {
        /// The round's time: the database's clock (SPEC "One clock"), which the decisions use.
        var now = Date()
        /// Collaborations with a window due at the round's time, most overdue first.
        var collaborations: [String] = []
        /// The earliest window end still pending (due or not).
        var next: Date?
    }

    /// One statement on the lease holder's connection, leaving out `excluded` collaborations: the
    /// database's clock (the round's time), the collaborations due then and the earliest end still
    /// pending, both from `ledger_streams_next_due`.
    func due(excluding excluded: [String], limit: Int, on connection: PostgresConnection) async throws -> Round {
        var round = Round()
        let rows = try await connection.queryUnlessClosed(
            """
            WITH t AS MATERIALIZED (SELECT clock_timestamp() AS now)
            SELECT NULL::text,
                   (extract(epoch FROM (
                       SELECT s.next_due_at FROM ledger_streams s
                       WHERE s.next_due_at IS NOT NULL AND s.stream_id <> ALL(\(excluded.map(Streams.collaboration)))
                       ORDER BY s.next_due_at LIMIT 1)) * 1000000)::int8,
                   (extract(epoch FROM t.now) * 1000000)::int8
            FROM t
            UNION ALL
            (SELECT s.stream_id, NULL, NULL FROM ledger_streams s, t
             WHERE s.next_due_at <= t.now AND s.stream_id <> ALL(\(excluded.map(Streams.collaboration)))
             ORDER BY s.next_due_at LIMIT \(Int32(limit)))
            """, logger: logger)
        for try await (stream, next, now) in rows.decode((String?, Int64?, Int64?).self) {
            if let stream {
                if let collaboration = Streams.collaborationId(of: stream) { round.collaborations.append(collaboration) }
            } else {
                round.next = next.map { RecordedTime.date(micros: $0) }
                round.now = now.map { RecordedTime.date(micros: $0) } ?? round.now
            }
        }
        return round
    }

    /// The expiry service as the log-health page shows it: who holds the lease (the lock's
    /// session, recognised when it is the service that recorded itself in
    /// `ledger_lease_holders`), whether it is making progress, the next `dueAt`, and how many
    /// windows are more than a second overdue.
    public func status() async throws -> LogStatus.Expiry {
        try await client.queryUnlessClosed(
            """
            WITH lock AS (
                SELECT a.pid, coalesce(a.application_name, '') AS application_name FROM pg_locks k JOIN pg_stat_activity a ON a.pid = k.pid
                WHERE k.locktype = 'advisory' AND k.granted AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND ((k.classid::int8 << 32) | k.objid::int8) = \(ExpiryService.leaseKey) AND k.objsubid = 1)
            SELECT (extract(epoch FROM ledger_next_expiry()) * 1000000)::int8, ledger_expiry_overdue(now()),
                   lock.pid, lock.application_name, h.pid = lock.pid,
                   (extract(epoch FROM h.since) * 1000000)::int8, (extract(epoch FROM h.progress_at) * 1000000)::int8,
                   coalesce(h.progress_at > now() - interval '30 seconds', false)
            FROM (SELECT 1) one LEFT JOIN lock ON true LEFT JOIN ledger_lease_holders h ON h.name = \(ExpiryService.leaseName)
            """, logger: logger
        ) { rows in
            let date = { (micros: Int64?) in micros.map { RecordedTime.date(micros: $0) } }
            for try await (next, overdue, pid, name, recognised, since, progress, recent)
                in rows.decode((Int64?, Int64, Int32?, String?, Bool?, Int64?, Int64?, Bool).self)
            {
                let holder = pid.map { pid in
                    let known = recognised == true
                    return LogStatus.Expiry.Holder(
                        applicationName: name ?? "", pid: Int(pid), recognised: known, since: known ? date(since) : nil,
                        progressAt: known ? date(progress) : nil)
                }
                return LogStatus.Expiry(
                    running: holder?.recognised == true && recent, nextDueAt: date(next), overdue: overdue, holder: holder)
            }
            return LogStatus.Expiry(running: false, nextDueAt: nil, overdue: 0)
        }
    }

    /// The overdue windows alone: the gauge every instance keeps (`ledger_expiry_overdue`).
    func overdue() async throws -> Int64 {
        try await client.queryUnlessClosed("SELECT ledger_expiry_overdue(now())", logger: logger) { rows in
            for try await count in rows.decode(Int64.self) { return count }
            return 0
        }
    }

    /// Records that this session holds the lease now (taken, or a round made): what status
    /// compares the lock's holder with.
    func recordHolder(taken: Bool, on connection: PostgresConnection) async throws {
        if taken {
            try await connection.queryUnlessClosed(
                """
                INSERT INTO ledger_lease_holders (name, pid, application_name, since, progress_at)
                VALUES (\(ExpiryService.leaseName), pg_backend_pid(), current_setting('application_name'), now(), now())
                ON CONFLICT (name) DO UPDATE SET pid = excluded.pid, application_name = excluded.application_name,
                    since = excluded.since, progress_at = excluded.progress_at
                """, logger: logger)
        } else {
            try await connection.queryUnlessClosed(
                "UPDATE ledger_lease_holders SET progress_at = now() WHERE name = \(ExpiryService.leaseName) AND pid = pg_backend_pid()",
                logger: logger)
        }
    }
}
