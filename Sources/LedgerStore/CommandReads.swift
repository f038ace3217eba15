import Foundation
import LedgerDomain
import LedgerPostgres
import Logging
import PostgresNIO

/// The read every command makes before it decides: its stream's stored state (none for a start),
/// its caller's pseudonym (the erasable mapping, made on first use) and the database's time.
///
/// **Grouped, like appends.** The reads that queue while one statement is in flight go to
/// PostgreSQL together as the next one (`GroupQueue`): a busy server pays one round trip and one
/// connection for many commands instead of one each (issue 47: a command's read, made on its own,
/// cost more than the append it precedes). Each read still returns what the database held when
/// its statement ran, and its time from `clock_timestamp()` then; a decision on it is checked by
/// the append's expected version as before, so grouping changes no outcome.
final class CommandReads: Sendable {
    struct Request: Sendable {
        /// The stream whose state is read; nil: none (a start).
        var stream: String?
        /// The account whose pseudonym is read (made on its first use); nil: none.
        var account: String?
    }

    struct Read: Sendable {
        /// The stream as stored; nil when it has no row.
        var stream: StreamState?
        var subject: String?
        var now: Date
    }

    /// Reads per statement at most.
    static let maxGroup = 64
    private let queue = GroupQueue<Request, Result<Read, any Error>>(maxWeight: maxGroup)

    func read(_ request: Request, client: PostgresClient, logger: Logger) async throws -> Read {
        try await queue.submit([request]) { requests in
            do {
                let reads = try await Self.statement(requests, client: client, logger: logger)
                return reads.map { .success($0) }
            } catch {
                return requests.map { _ in .failure(error) }
            }
        }[0].get()
    }

    /// One statement for the group: a row per request, in order.
    private static func statement(_ requests: [Request], client: PostgresClient, logger: Logger) async throws -> [Read] {
        // '' for none: arrays of text bind without NULL elements (no stream id or account is empty).
        let streams = requests.map { $0.stream ?? "" }
        let accounts = requests.map { $0.account ?? "" }
        return try await client.queryUnlessClosed(
            """
            SELECT r.i, s.version, s.state::text, s.position,
                   CASE WHEN r.account <> '' THEN ledger_subject(r.account) END,
                   (extract(epoch FROM clock_timestamp()) * 1000000)::int8
            FROM unnest(\(streams)::text[], \(accounts)::text[]) WITH ORDINALITY AS r(stream, account, i)
            LEFT JOIN ledger_streams s ON r.stream <> '' AND s.stream_id = r.stream
            ORDER BY r.i
            """, logger: logger
        ) { rows in
            var reads: [Read] = []
            for try await (_, version, state, position, subject, micros) in rows.decode(
                (Int64, Int64?, String?, Int64?, String?, Int64).self)
            {
                let stream = version.flatMap { version in position.map { StreamState(version: version, state: state, position: $0) } }
                reads.append(Read(stream: stream, subject: subject, now: RecordedTime.date(micros: micros)))
            }
            guard reads.count == requests.count else {
                throw StoreError.invalidRequest("the grouped read answered \(reads.count) rows for \(requests.count)")
            }
            return reads
        }
    }
}
