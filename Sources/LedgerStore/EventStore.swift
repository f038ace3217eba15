import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
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
    /// The commands' reads before they decide, grouped as appends are.
    let reads: CommandReads
    /// Upper bound of events written in one transaction.
    let maxEventsPerTransaction: Int
    let metrics: AppendMetrics

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
        self.reads = CommandReads(client: client, logger: logger)
        self.metrics = AppendMetrics(logger: logger)
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

    /// Groups of at least this many events take the two-call path (`writeLargeGroup`, in
    /// EventStore+LargeGroups.swift); the others, and every group a test hook watches, one
    /// statement (`writeSmallGroup`, in EventStore+SmallGroups.swift).
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
        metrics.record(events: events, appends: requests.count, duration: ContinuousClock.now - started)
        return results!
    }

    /// -1 any, 0 no stream, n exact: the SQL functions' encoding.
    static func expected(_ version: ExpectedVersion) -> Int64 {
        switch version {
        case .any: -1
        case .noStream: 0
        case .exact(let v): v
        }
    }

    /// The appended requests' personal values, in the append's transaction (`ledger_keep_values`).
    static func keep(_ values: KeptValues.Columns, outcomes: [String], _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !values.requests.isEmpty else { return }
        try await connection.queryUnlessClosed(
            """
            SELECT ledger_keep_values(\(outcomes), \(values.requests), \(values.commitments), \(values.subjects), \(values.kinds),
                                      \(values.values), \(values.openings)::bytea[])
            """, logger: logger)
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
