import Foundation
import LedgerDomain
import LedgerPostgres
import Logging
import PostgresNIO
import Synchronization

/// The read every command makes before it decides: its stream's stored state (none for a start),
/// its caller's pseudonym (the erasable mapping, made on first use) and the database's time.
///
/// **Grouped, like appends.** The reads that queue while one statement is in flight go to
/// PostgreSQL together as the next one (`GroupQueue`): a busy server pays one round trip and one
/// connection for many commands instead of one each (issue 47: a command's read, made on its own,
/// cost more than the append it precedes). Each read still returns what the database held when
/// its statement ran, and its time from `clock_timestamp()` then; a decision on it is checked by
/// the append's expected version as before, so grouping changes no outcome.
///
/// **One read fails alone.** A group whose statement fails is read again request by request, so
/// a read that cannot succeed (an account the table refuses) fails only its own command; the
/// statement runs in a task of its own, so a leader's cancellation (its request abandoned) does
/// not fail the others it reads for.
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
    let client: PostgresClient
    let logger: Logger
    private let queue = GroupQueue<Request, Result<Read, any Error>>(maxWeight: maxGroup)
    /// Statements sent so far (the tests see the reads grouped).
    let statements = Atomic<Int>(0)

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    func read(_ request: Request) async throws -> Read {
        // '' stands for none in the statement's arrays: an empty id or account is no request.
        guard request.stream != "", request.account != "" else { throw StoreError.invalidRequest("an empty stream id or account") }
        return try await queue.submit([request]) { requests in
            do {
                return try await self.statement(requests).map { .success($0) }
            } catch  where requests.count > 1 {
                var reads: [Result<Read, any Error>] = []
                for request in requests {
                    do { reads.append(.success(try await self.statement([request])[0])) } catch { reads.append(.failure(error)) }
                }
                return reads
            } catch {
                return [.failure(error)]
            }
        }[0].get()
    }

    /// One statement for the group, in a task of its own: a row per request, in order. New
    /// pseudonyms are made in the accounts' order, so two statements making the same ones never
    /// wait on each other crosswise.
    private func statement(_ requests: [Request]) async throws -> [Read] {
        statements.add(1, ordering: .relaxed)
        let streams = requests.map { $0.stream ?? "" }
        let accounts = requests.map { $0.account ?? "" }
        let (client, logger) = (client, logger)
        return try await Task {
            try await client.queryUnlessClosed(
                """
                WITH r AS (SELECT * FROM unnest(\(streams)::text[], \(accounts)::text[]) WITH ORDINALITY AS r(stream, account, i)),
                subjects AS MATERIALIZED (
                    SELECT a.account, ledger_subject(a.account) AS pseudonym
                    FROM (SELECT DISTINCT account FROM r WHERE account <> '' ORDER BY account) AS a)
                SELECT r.i, s.version, s.state::text, s.position, subjects.pseudonym,
                       (extract(epoch FROM clock_timestamp()) * 1000000)::int8
                FROM r LEFT JOIN ledger_streams s ON r.stream <> '' AND s.stream_id = r.stream
                LEFT JOIN subjects ON subjects.account = r.account
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
        }.value
    }
}
