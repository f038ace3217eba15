import Foundation
import LedgerDomain
import LedgerPostgres
import Logging
import NIOCore
import PostgresNIO

/// Reads of the event log: no lock, never a skipped event (see the ordering note on
/// `EventStore`: a reader of "everything after N" never sees N+1 while N is in flight).
extension EventStore {
    package static func decodeEvents(_ rows: PostgresRowSequence) async throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        for try await (position, stream, version, id, type, data, metadata, micros, hash) in rows.decode(
            (Int64, String, Int64, UUID, String, String, String, Int64, ByteBuffer).self)
        {
            events.append(
                RecordedEvent(
                    position: position, streamId: stream, version: version, eventId: id, type: type,
                    data: data, metadata: metadata, recordedAtMicros: micros, hash: Array(buffer: hash)))
        }
        return events
    }

    public func readStream(_ streamId: String, afterVersion: Int64 = 0) async throws -> [RecordedEvent] {
        try await client.queryUnlessClosed(
            """
            SELECT position, stream_id, version, event_id, event_type, data::text, metadata::text,
                   (extract(epoch FROM recorded_at) * 1000000)::int8, hash
            FROM ledger_events WHERE stream_id = \(streamId) AND version > \(afterVersion) ORDER BY version
            """, logger: logger, Self.decodeEvents)
    }

    public func readAll(after position: Int64, limit: Int) async throws -> [RecordedEvent] {
        try await client.queryUnlessClosed(
            """
            SELECT position, stream_id, version, event_id, event_type, data::text, metadata::text,
                   (extract(epoch FROM recorded_at) * 1000000)::int8, hash
            FROM ledger_events WHERE position > \(position) ORDER BY position LIMIT \(limit)
            """, logger: logger, Self.decodeEvents)
    }

    /// The events at `positions`, in position order; a position the log does not hold is left out.
    public func read(positions: [Int64]) async throws -> [RecordedEvent] {
        guard !positions.isEmpty else { return [] }
        return try await client.queryUnlessClosed(
            """
            SELECT position, stream_id, version, event_id, event_type, data::text, metadata::text,
                   (extract(epoch FROM recorded_at) * 1000000)::int8, hash
            FROM ledger_events WHERE position = ANY(\(positions)) ORDER BY position
            """, logger: logger, Self.decodeEvents)
    }

    /// The first position among 1 … `size` whose event was recorded after `micros` (since the
    /// epoch), or nil if none: exact because times rise along the log
    /// (`ledger_first_recorded_after`, Migrations/functions), a binary search by position.
    public func firstPosition(recordedAfter micros: Int64, through size: Int64) async throws -> Int64? {
        try await client.queryUnlessClosed(
            """
            SELECT ledger_first_recorded_after(timestamptz 'epoch' + \(micros) * interval '1 microsecond', \(size))
            """, logger: logger
        ) { rows in
            for try await position in rows.decode(Int64?.self) { return position }
            return nil
        }
    }

    public func head() async throws -> LogHead {
        try await client.queryUnlessClosed("SELECT position, hash FROM ledger_head", logger: logger) { rows in
            for try await (position, hash) in rows.decode((Int64, ByteBuffer).self) {
                return LogHead(position: position, hash: Array(buffer: hash))
            }
            throw StoreError.invalidRequest("ledger_head row missing: run migrations")
        }
    }

    public func streamState(_ streamId: String) async throws -> StreamState? {
        try await client.queryUnlessClosed(
            "SELECT version, state::text, position FROM ledger_streams WHERE stream_id = \(streamId)", logger: logger
        ) { rows in
            for try await (version, state, position) in rows.decode((Int64, String?, Int64).self) {
                return StreamState(version: version, state: state, position: position)
            }
            return nil
        }
    }
}
