import Foundation
import LedgerDomain
import LedgerWire
import LedgerPostgres
import Logging
import NIOCore
import PostgresNIO

/// The event log on PostgreSQL.
///
/// **Ordering without gaps.** Every append transaction first locks the single `ledger_head`
/// row, takes the next positions from it, and keeps the lock until it commits. Position order
/// is therefore commit order: a transaction holding position N+1 cannot even start writing
/// before the one holding N has committed and become visible. A reader of "everything after
/// N" can never see N+1 while N is still in flight, and positions have no holes (an aborted
/// append never advanced the head). We chose this over an xid8 visibility horizon because it
/// keeps readers trivial (`WHERE position > $1`) and lets the store compute the hash chain,
/// which needs the previous hash anyway, i.e. a serial point.
///
/// **Group commit.** Serialising commits would cost one fsync per append. Instead, appends
/// that arrive while a transaction is running queue up, and the next leader writes all of
/// them in one transaction (each still checked against its own expected version). Across
/// processes the head lock serialises the groups.
public final class EventStore: Sendable {
    /// The channel every append NOTIFYs at commit, with the new head position as payload.
    public static let channel = "ledger_events"

    let client: PostgresClient
    let logger: Logger
    let hooks: Hooks
    private let groups: GroupQueue<AppendRequest, Result<AppendResult, any Error>>
    /// Upper bound of events written in one transaction.
    let maxEventsPerTransaction: Int

    /// Test seams: code run inside the append transaction before it commits.
    public struct Hooks: Sendable {
        public var beforeCommit: (@Sendable ([AppendRequest]) async throws -> Void)?
        public init(beforeCommit: (@Sendable ([AppendRequest]) async throws -> Void)? = nil) {
            self.beforeCommit = beforeCommit
        }
    }

    public init(client: PostgresClient, logger: Logger, maxEventsPerTransaction: Int = 2000, hooks: Hooks = Hooks()) {
        self.client = client
        self.logger = logger
        self.hooks = hooks
        self.maxEventsPerTransaction = maxEventsPerTransaction
        self.groups = GroupQueue(maxWeight: maxEventsPerTransaction) { $0.events.count }
    }

    // MARK: Append (group commit)

    public func append(_ request: AppendRequest) async throws -> AppendResult {
        try await appendAll([request])[0].get()
    }

    /// Queues the requests together, so the group that takes the first takes them all (up to
    /// `maxEventsPerTransaction` events).
    public func appendAll(_ requests: [AppendRequest]) async -> [Result<AppendResult, any Error>] {
        var results = [Result<AppendResult, any Error>?](repeating: nil, count: requests.count)
        var queued: [Int] = []
        for (index, request) in requests.enumerated() {
            do {
                guard !request.events.isEmpty else { throw StoreError.invalidRequest("no events") }
                guard request.events.count <= maxEventsPerTransaction else {
                    throw StoreError.invalidRequest("more than \(maxEventsPerTransaction) events in one append")
                }
                // Checked here, not by the database: a bad request must fail alone, not the group it joins.
                try Self.validate(request)
                queued.append(index)
            } catch {
                results[index] = .failure(error)
            }
        }
        guard !queued.isEmpty else { return results.map { $0! } }
        let written = await groups.submit(queued.map { requests[$0] }) { group in
            do {
                return try await self.writeGroup(group)
            } catch {
                return group.map { _ in .failure(error) }
            }
        }
        for (index, result) in zip(queued, written) { results[index] = result }
        return results.map { $0! }
    }

    /// Groups of at least this many events take the two-call path (`writeLargeGroup`).
    static let largeGroup = 200

    private func writeGroup(_ requests: [AppendRequest]) async throws -> [Result<AppendResult, any Error>] {
        let started = ContinuousClock.now
        let events = requests.reduce(0) { $0 + $1.events.count }
        var results: [Result<AppendResult, any Error>]?
        if hooks.beforeCommit == nil, events >= Self.largeGroup {
            do {
                results = try await writeLargeGroup(requests)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                // An event id already stored (a retry): ledger_append answers those.
            }
        }
        if results == nil { results = try await writeSmallGroup(requests) }
        AppendMetrics.record(events: events, appends: requests.count, duration: ContinuousClock.now - started)
        return results!
    }

    /// Large groups: hashing hundreds of events in PL/pgSQL costs more than inserting them,
    /// so `ledger_append_plan` locks the head and decides each request, the store chains the
    /// events (`HashChain`, as `ledger log verify` does) and `ledger_append_write` inserts
    /// them, in one transaction (see `Migrations/sql/0005_append_large_groups.sql`). Throws
    /// a unique violation when an event id is stored already (a retry, or a mismatch); the
    /// caller then uses `writeSmallGroup`, which answers those.
    private func writeLargeGroup(_ requests: [AppendRequest]) async throws -> [Result<AppendResult, any Error>] {
        let expected = requests.map { Self.expected($0.expectedVersion) }
        return try await client.transaction(logger: logger) { connection in
            let rows = try await connection.queryUnlessClosed(
                """
                SELECT outcome, first_position, first_version, head_hash, at_micros
                FROM ledger_append_plan(\(requests.map(\.streamId)), \(expected), \(requests.map { Int32($0.events.count) }),
                                        \(requests.map(\.events[0].eventId)))
                ORDER BY request
                """, logger: logger)
            var plan: [(outcome: String, position: Int64?, version: Int64)] = []
            var previous = HashChain.genesis
            var micros: Int64 = 0
            for try await (outcome, position, version, hash, at) in rows.decode((String, Int64?, Int64, ByteBuffer, Int64).self) {
                plan.append((outcome, position, version))
                previous = Array(buffer: hash)
                micros = at
            }
            guard plan.count == requests.count else { throw StoreError.invalidRequest("append plan has \(plan.count) rows") }
            var events = LargeGroupColumns()
            var streams: [String] = []
            var streamState: [String: (version: Int64, state: String, position: Int64)] = [:]
            var results: [Result<AppendResult, any Error>] = []
            for (request, planned) in zip(requests, plan) {
                guard planned.outcome == "ok", let first = planned.position else {
                    results.append(
                        .failure(
                            StoreError.versionConflict(
                                stream: request.streamId, expected: request.expectedVersion, actual: planned.version)))
                    continue
                }
                for (offset, event) in request.events.enumerated() {
                    let position = first + Int64(offset)
                    let version = planned.version + Int64(offset)
                    previous = HashChain.hash(
                        previous: previous, position: position, streamId: request.streamId, version: version,
                        eventId: event.eventId, type: event.type, data: event.data, metadata: event.metadata,
                        recordedAtMicros: micros)
                    events.append(position: position, stream: request.streamId, version: version, event: event, hash: previous)
                }
                let last = first + Int64(request.events.count) - 1
                let version = planned.version + Int64(request.events.count) - 1
                if streamState[request.streamId] == nil { streams.append(request.streamId) }
                let state = request.state ?? streamState[request.streamId]?.state ?? ""
                streamState[request.streamId] = (version, state, last)
                results.append(
                    .success(
                        AppendResult(
                            streamId: request.streamId, firstPosition: first, lastPosition: last, version: version, duplicate: false)))
            }
            if !events.positions.isEmpty {
                let s = streams.map { streamState[$0]! }
                try await connection.queryUnlessClosed(
                    """
                    SELECT ledger_append_write(
                        \(events.positions), \(events.streams), \(events.versions), \(events.ids), \(events.types),
                        \(events.data), \(events.metadata), \(events.hashes), \(micros),
                        \(streams), \(s.map(\.version)), \(s.map(\.state)), \(s.map(\.position)))
                    """, logger: logger)
            }
            try await Self.keep(
                KeptValues.Columns(requests), outcomes: results.map { (try? $0.get()) == nil ? "conflict" : "ok" }, connection, logger)
            return results
        }
    }

    /// `ledger_append_write`'s event columns.
    struct LargeGroupColumns {
        var positions: [Int64] = [], streams: [String] = [], versions: [Int64] = [], hashes: [ByteBuffer] = []
        var ids: [UUID] = [], types: [String] = [], data: [String] = [], metadata: [String] = []

        mutating func append(position: Int64, stream: String, version: Int64, event: NewEvent, hash: [UInt8]) {
            positions.append(position)
            streams.append(stream)
            versions.append(version)
            hashes.append(ByteBuffer(bytes: hash))
            ids.append(event.eventId)
            types.append(event.type)
            data.append(event.data)
            metadata.append(event.metadata)
        }
    }

    /// -1 any, 0 no stream, n exact: the SQL functions' encoding.
    static func expected(_ version: ExpectedVersion) -> Int64 {
        switch version {
        case .any: -1
        case .noStream: 0
        case .exact(let v): v
        }
    }

    /// One statement: `ledger_append` locks the head, checks every request at its expected
    /// version (and answers retries), chains and inserts what passes.
    private func writeSmallGroup(_ requests: [AppendRequest]) async throws -> [Result<AppendResult, any Error>] {
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
            throw StoreError.invalidRequest("ledger_append_committed answered nothing")
        }
    }

    /// The appended requests' personal values, in the append's transaction (`ledger_keep_values`).
    private static func keep(_ values: KeptValues.Columns, outcomes: [String], _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !values.requests.isEmpty else { return }
        try await connection.queryUnlessClosed(
            """
            SELECT ledger_keep_values(\(outcomes), \(values.requests), \(values.commitments), \(values.subjects), \(values.kinds),
                                      \(values.values), \(values.openings)::bytea[])
            """, logger: logger)
    }

    private static func collect(_ rows: PostgresRowSequence) async throws -> [(Int, String, Int64?, Int64?, Int64?)] {
        var result: [(Int, String, Int64?, Int64?, Int64?)] = []
        for try await row in rows.decode((Int32, String, Int64?, Int64?, Int64?).self) {
            result.append((Int(row.0), row.1, row.2, row.3, row.4))
        }
        return result
    }

    static func validate(_ request: AppendRequest) throws {
        func check(_ text: String, _ what: String) throws {
            if text.utf8.contains(0) { throw StoreError.invalidRequest("\(what) contains a NUL byte") }
        }
        try check(request.streamId, "stream id")
        guard !request.streamId.isEmpty else { throw StoreError.invalidRequest("empty stream id") }
        for event in request.events {
            try check(event.type, "event type")
            // An entry of the tiles' bundles is at most 65,535 bytes (C2SP tlog-tiles): EventLeaf's
            // fixed fields are 56 bytes.
            let leaf = 56 + request.streamId.utf8.count + event.type.utf8.count + event.data.utf8.count + event.metadata.utf8.count
            guard leaf <= Int(UInt16.max) else {
                throw DomainError(.payloadTooLarge, "the event would be \(leaf) bytes in the log; an event is at most 65,535 bytes")
            }
            for (json, what) in [(event.data, "data"), (event.metadata, "metadata")] {
                try check(json, what)
                guard JSONSyntax.isValid(json) else {
                    throw StoreError.invalidRequest("event \(what) is not valid JSON")
                }
            }
        }
        if let state = request.state {
            try check(state, "state")
        }
    }
}
