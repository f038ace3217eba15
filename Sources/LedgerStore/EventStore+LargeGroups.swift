import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import Logging
import NIOCore
import PostgresNIO

/// The append path of groups of `largeGroup` events or more: plan in SQL, chain in Swift, write in SQL.
extension EventStore {
    /// Large groups: hashing hundreds of events in PL/pgSQL costs more than inserting them,
    /// so `ledger_append_plan` locks the head and decides each request, the store chains the
    /// events (`HashChain`, as `ledger log verify` does) and `ledger_append_write` inserts
    /// them, in one transaction (see `Migrations/sql/0005_append_large_groups.sql`). Throws
    /// a unique violation when an event id is stored already (a retry, or a mismatch); the
    /// caller then uses `writeSmallGroup`, which answers those.
    func writeLargeGroup(_ requests: [AppendRequest]) async throws -> [Result<AppendResult, any Error>] {
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
}
