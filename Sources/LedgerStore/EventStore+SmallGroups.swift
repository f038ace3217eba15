import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import Logging
import NIOCore
import PostgresNIO

/// The append path of smaller groups, and of every group a test hook watches: one `ledger_append`,
/// through the procedure that commits before it answers (or, for the hook, in a transaction).
extension EventStore {
    /// One statement: `ledger_append` locks the head, checks every request at its expected
    /// version (and answers retries), chains and inserts what passes.
    func writeSmallGroup(_ requests: [AppendRequest]) async throws -> [Result<AppendResult, any Error>] {
        let streams = requests.map(\.streamId)
        let expected = requests.map { Self.expected($0.expectedVersion) }
        let states = requests.map { $0.state ?? "" }  // "" keeps the stored state
        let counts = requests.map { Int32($0.events.count) }
        let events = requests.flatMap(\.events)
        let query: PostgresQuery = """
            SELECT request, outcome, first_position, last_position, stream_version
            FROM ledger_append(\(streams), \(expected), \(states), \(counts),
                               \(events.map(\.eventId)), \(events.map(\.type)), \(events.map(\.data)), \(events.map(\.metadata)))
            """
        let values = KeptValues.Columns(requests)
        let rows: [(Int, String, Int64?, Int64?, Int64?)]
        if let hook = hooks.beforeCommit {
            rows = try await client.transaction(logger: logger) { connection in
                let rows = try await Self.collect(try await connection.queryUnlessClosed(query, logger: logger))
                try await Self.keep(values, outcomes: rows.map(\.1), connection, logger)
                try await hook(requests)
                return rows
            }
        } else {
            // The results are answered to the appenders, so they must come after the commit:
            // the procedure commits before it answers (see 0007_append_committed.sql, 0017).
            rows = try await committed(streams, expected, states, counts, events, values)
        }
        return rows.map { (index, outcome, first, last, version) in
            let request = requests[index - 1]
            switch outcome {
            case "ok", "duplicate":
                return .success(
                    AppendResult(
                        streamId: request.streamId, firstPosition: first!, lastPosition: last!, version: version!,
                        duplicate: outcome == "duplicate"))
            case "conflict":
                return .failure(
                    StoreError.versionConflict(
                        stream: request.streamId, expected: request.expectedVersion, actual: version ?? 0))
            default:
                return .failure(StoreError.idempotencyMismatch(eventId: request.events[0].eventId))
            }
        }
    }

    /// `ledger_append` and `ledger_keep_values` through `ledger_append_and_keep`: one round trip,
    /// answered after the commit. Through `queryUnlessClosed`: the group's leader must not wait
    /// for good on a connection closed under it, or every later append of the process would wait too.
    private func committed(
        _ streams: [String], _ expected: [Int64], _ states: [String], _ counts: [Int32], _ events: [NewEvent], _ values: KeptValues.Columns
    ) async throws -> [(Int, String, Int64?, Int64?, Int64?)] {
        try await client.queryUnlessClosed(
            """
            CALL ledger_append_and_keep(\(streams), \(expected), \(states), \(counts),
                \(events.map(\.eventId)), \(events.map(\.type)), \(events.map(\.data)), \(events.map(\.metadata)),
                \(values.requests), \(values.commitments), \(values.subjects), \(values.kinds), \(values.values), \(values.openings)::bytea[])
            """, logger: logger
        ) { answer in
            for try await (outcomes, first, last, versions) in answer.decode(([String], [Int64], [Int64], [Int64]).self) {
                return outcomes.indices.map { i in
                    (i + 1, outcomes[i], first[i] < 0 ? nil : first[i], last[i] < 0 ? nil : last[i], versions[i] < 0 ? nil : versions[i])
                }
            }
            throw StoreError.invalidRequest("ledger_append_and_keep answered nothing")
        }
    }

    private static func collect(_ rows: PostgresRowSequence) async throws -> [(Int, String, Int64?, Int64?, Int64?)] {
        var result: [(Int, String, Int64?, Int64?, Int64?)] = []
        for try await row in rows.decode((Int32, String, Int64?, Int64?, Int64?).self) {
            result.append((Int(row.0), row.1, row.2, row.3, row.4))
        }
        return result
    }
}
