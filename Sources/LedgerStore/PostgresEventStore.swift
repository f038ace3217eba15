import Foundation
import LedgerDomain
import Logging
import NIOCore
import PostgresNIO
import Synchronization

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
public final class PostgresEventStore: EventStore {
    let client: PostgresClient
    let logger: Logger
    let hooks: Hooks
    private let queue = Mutex<QueueState>(QueueState())
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
    }

    // MARK: Append (group commit)

    struct Pending: Sendable {
        let request: AppendRequest
        let ticket: Ticket<Turn>
    }

    enum Turn: Sendable {
        case done(Result<AppendResult, any Error>)
        /// The previous leader finished with requests still queued: this waiter writes next.
        case lead
    }

    struct QueueState {
        var pending: [Pending] = []
        var leaderActive = false
    }

    public func append(_ request: AppendRequest) async throws -> AppendResult {
        guard !request.events.isEmpty else { throw StoreError.invalidRequest("no events") }
        guard request.events.count <= maxEventsPerTransaction else {
            throw StoreError.invalidRequest("more than \(maxEventsPerTransaction) events in one append")
        }
        // Checked here, not by the database: a bad request must fail alone, not the group it joins.
        try Self.validate(request)
        let ticket = Ticket<Turn>()
        let leads = queue.withLock { state in
            state.pending.append(Pending(request: request, ticket: ticket))
            if state.leaderActive { return false }
            state.leaderActive = true
            return true
        }
        var turn: Turn = leads ? .lead : await ticket.wait()
        while case .lead = turn {
            await leadOneGroup()
            turn = await ticket.wait()
        }
        guard case .done(let result) = turn else { preconditionFailure("unreachable") }
        return try result.get()
    }

    /// Takes the queued appends, writes them in one transaction, and passes leadership on.
    private func leadOneGroup() async {
        let group: [Pending] = queue.withLock { state in
            var taken: [Pending] = []
            var events = 0
            while let next = state.pending.first,
                taken.isEmpty || events + next.request.events.count <= maxEventsPerTransaction
            {
                taken.append(next)
                events += next.request.events.count
                state.pending.removeFirst()
            }
            return taken
        }
        do {
            let results = try await writeGroup(group.map(\.request))
            for (pending, result) in zip(group, results) { pending.ticket.resolve(.done(result)) }
        } catch {
            for pending in group { pending.ticket.resolve(.done(.failure(Self.unwrap(error)))) }
        }
        let next: Pending? = queue.withLock { state in
            guard let first = state.pending.first else {
                state.leaderActive = false
                return nil
            }
            return first
        }
        next?.ticket.resolve(.lead)
    }

    static func unwrap(_ error: any Error) -> any Error {
        if let tx = error as? PostgresTransactionError {
            return tx.closureError ?? tx.commitError ?? tx.beginError ?? error
        }
        return error
    }

    /// One transaction: lock the head, check every request, insert what passes.
    private func writeGroup(_ requests: [AppendRequest]) async throws -> [Result<AppendResult, any Error>] {
        try await client.withTransaction(logger: logger) { connection in
            let headRows = try await connection.query(
                "SELECT position, hash FROM ledger_head FOR UPDATE", logger: logger)
            var head: LogHead? = nil
            for try await (position, hash) in headRows.decode((Int64, ByteBuffer).self) {
                head = LogHead(position: position, hash: Array(buffer: hash))
            }
            guard var current = head else { throw StoreError.invalidRequest("ledger_head row missing: run migrations") }

            let streamIds = Array(Set(requests.map(\.streamId)))
            var versions: [String: Int64] = [:]
            let versionRows = try await connection.query(
                "SELECT stream_id, version FROM ledger_streams WHERE stream_id = ANY(\(streamIds))", logger: logger)
            for try await (stream, version) in versionRows.decode((String, Int64).self) {
                versions[stream] = version
            }

            let eventIds = requests.flatMap { $0.events.map(\.eventId) }
            var stored: [UUID: (stream: String, position: Int64, version: Int64)] = [:]
            let existingRows = try await connection.query(
                "SELECT event_id, stream_id, position, version FROM ledger_events WHERE event_id = ANY(\(eventIds))",
                logger: logger)
            for try await (id, stream, position, version) in existingRows.decode((UUID, String, Int64, Int64).self) {
                stored[id] = (stream, position, version)
            }

            let recordedAt = Self.nowMicros()
            var rows = EventRows()
            var states: [String: (version: Int64, state: String?, position: Int64)] = [:]
            var results: [Result<AppendResult, any Error>] = []
            for request in requests {
                if let duplicate = Self.duplicateResult(of: request, stored: stored) {
                    results.append(duplicate)
                    continue
                }
                let actual = versions[request.streamId] ?? 0
                guard request.expectedVersion.matches(current: actual) else {
                    results.append(.failure(StoreError.versionConflict(
                        stream: request.streamId, expected: request.expectedVersion, actual: actual)))
                    continue
                }
                let first = current.position + 1
                var version = actual
                for event in request.events {
                    current.position += 1
                    version += 1
                    current.hash = HashChain.hash(
                        previous: current.hash, position: current.position, streamId: request.streamId,
                        version: version, eventId: event.eventId, type: event.type, data: event.data,
                        metadata: event.metadata, recordedAtMicros: recordedAt)
                    rows.add(position: current.position, stream: request.streamId, version: version, event: event, hash: current.hash)
                    stored[event.eventId] = (request.streamId, current.position, version)
                }
                versions[request.streamId] = version
                let previousState = states[request.streamId]?.state
                states[request.streamId] = (version, request.state ?? previousState, current.position)
                results.append(.success(AppendResult(
                    streamId: request.streamId, firstPosition: first, lastPosition: current.position,
                    version: version, duplicate: false)))
            }
            guard !rows.positions.isEmpty else { return results }

            let stateStreams = Array(states.keys)
            let stateVersions = stateStreams.map { states[$0]!.version }
            let stateJSON = stateStreams.map { states[$0]!.state ?? "" }
            let statePositions = stateStreams.map { states[$0]!.position }
            let hashBuffer = ByteBuffer(bytes: current.hash)
            try await connection.query(
                """
                WITH appended AS (
                    INSERT INTO ledger_events
                        (position, stream_id, version, event_id, event_type, data, metadata, recorded_at, hash)
                    SELECT e.position, e.stream_id, e.version, e.event_id, e.event_type, e.data::json, e.metadata::json,
                           to_timestamp(\(recordedAt)::float8 / 1000000), e.hash
                    FROM unnest(\(rows.positions), \(rows.streams), \(rows.versions), \(rows.ids), \(rows.types),
                                \(rows.data), \(rows.metadata), \(rows.hashes))
                        AS e(position, stream_id, version, event_id, event_type, data, metadata, hash)
                    RETURNING 1
                ), streams AS (
                    INSERT INTO ledger_streams (stream_id, version, state, position)
                    SELECT s.stream_id, s.version, NULLIF(s.state, '')::json, s.position
                    FROM unnest(\(stateStreams), \(stateVersions), \(stateJSON), \(statePositions))
                        AS s(stream_id, version, state, position)
                    ON CONFLICT (stream_id) DO UPDATE
                        SET version = excluded.version,
                            state = COALESCE(excluded.state, ledger_streams.state),
                            position = excluded.position
                    RETURNING 1
                )
                UPDATE ledger_head SET position = \(current.position), hash = \(hashBuffer)
                """,
                logger: logger)
            if let hook = hooks.beforeCommit { try await hook(requests) }
            AppendMetrics.record(events: rows.positions.count, appends: requests.count)
            return results
        }
    }

    /// A request whose event ids are all stored already is a retry: answer as the first time.
    private static func duplicateResult(
        of request: AppendRequest, stored: [UUID: (stream: String, position: Int64, version: Int64)]
    ) -> Result<AppendResult, any Error>? {
        let found = request.events.map { stored[$0.eventId] }
        guard found.contains(where: { $0 != nil }) else { return nil }
        guard found.allSatisfy({ $0?.stream == request.streamId }) else {
            let id = zip(request.events, found).first { $0.1?.stream != request.streamId }!.0.eventId
            return .failure(StoreError.idempotencyMismatch(eventId: id))
        }
        let entries = found.compactMap { $0 }
        return .success(AppendResult(
            streamId: request.streamId,
            firstPosition: entries.map(\.position).min()!, lastPosition: entries.map(\.position).max()!,
            version: entries.map(\.version).max()!, duplicate: true))
    }

    static func validate(_ request: AppendRequest) throws {
        func check(_ text: String, _ what: String) throws {
            if text.utf8.contains(0) { throw StoreError.invalidRequest("\(what) contains a NUL byte") }
        }
        try check(request.streamId, "stream id")
        guard !request.streamId.isEmpty else { throw StoreError.invalidRequest("empty stream id") }
        for event in request.events {
            try check(event.type, "event type")
            for (json, what) in [(event.data, "data"), (event.metadata, "metadata")] {
                try check(json, what)
                guard (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])) != nil else {
                    throw StoreError.invalidRequest("event \(what) is not valid JSON")
                }
            }
        }
        if let state = request.state {
            try check(state, "state")
        }
    }

    static func nowMicros() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }

    // MARK: Reads

    static func decodeEvents(_ rows: PostgresRowSequence) async throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        for try await (position, stream, version, id, type, data, metadata, micros, hash) in rows.decode(
            (Int64, String, Int64, UUID, String, String, String, Int64, ByteBuffer).self)
        {
            events.append(RecordedEvent(
                position: position, streamId: stream, version: version, eventId: id, type: type,
                data: data, metadata: metadata, recordedAtMicros: micros, hash: Array(buffer: hash)))
        }
        return events
    }

    public func readStream(_ streamId: String, afterVersion: Int64 = 0) async throws -> [RecordedEvent] {
        let rows = try await client.query(
            """
            SELECT position, stream_id, version, event_id, event_type, data::text, metadata::text,
                   (extract(epoch FROM recorded_at) * 1000000)::int8, hash
            FROM ledger_events WHERE stream_id = \(streamId) AND version > \(afterVersion) ORDER BY version
            """, logger: logger)
        return try await Self.decodeEvents(rows)
    }

    public func readAll(after position: Int64, limit: Int) async throws -> [RecordedEvent] {
        let rows = try await client.query(
            """
            SELECT position, stream_id, version, event_id, event_type, data::text, metadata::text,
                   (extract(epoch FROM recorded_at) * 1000000)::int8, hash
            FROM ledger_events WHERE position > \(position) ORDER BY position LIMIT \(limit)
            """, logger: logger)
        return try await Self.decodeEvents(rows)
    }

    public func head() async throws -> LogHead {
        let rows = try await client.query("SELECT position, hash FROM ledger_head", logger: logger)
        for try await (position, hash) in rows.decode((Int64, ByteBuffer).self) {
            return LogHead(position: position, hash: Array(buffer: hash))
        }
        throw StoreError.invalidRequest("ledger_head row missing: run migrations")
    }

    public func streamState(_ streamId: String) async throws -> StreamState? {
        let rows = try await client.query(
            "SELECT version, state::text, position FROM ledger_streams WHERE stream_id = \(streamId)", logger: logger)
        for try await (version, state, position) in rows.decode((Int64, String?, Int64).self) {
            return StreamState(version: version, state: state, position: position)
        }
        return nil
    }
}

/// Column arrays for one multi-row insert.
struct EventRows {
    var positions: [Int64] = []
    var streams: [String] = []
    var versions: [Int64] = []
    var ids: [UUID] = []
    var types: [String] = []
    var data: [String] = []
    var metadata: [String] = []
    var hashes: [ByteBuffer] = []

    mutating func add(position: Int64, stream: String, version: Int64, event: NewEvent, hash: [UInt8]) {
        positions.append(position)
        streams.append(stream)
        versions.append(version)
        ids.append(event.eventId)
        types.append(event.type)
        data.append(event.data)
        metadata.append(event.metadata)
        hashes.append(ByteBuffer(bytes: hash))
    }
}
