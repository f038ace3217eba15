import LedgerIndex
import LedgerPostgres
import Logging
import NIOCore
import PostgresNIO

/// The statements of the stored index that read the log, and the keys' lists.
extension IndexTables {
    /// Adds each key's new positions to its list (`LogIndex.Folded.entries`), in one statement,
    /// inside the fold's transaction: a position is listed once, so a second listing fails.
    static func post(_ entries: [Hash256: [IndexValue.Entry]], on connection: PostgresConnection, logger: Logger) async throws {
        var keys: [ByteBuffer] = []
        var positions: [Int64] = []
        for (key, list) in entries {
            for entry in list {
                keys.append(ByteBuffer(bytes: key.bytes))
                positions.append(entry.position)
            }
        }
        guard !keys.isEmpty else { return }
        try await connection.queryUnlessClosed(
            """
            INSERT INTO ledger_index_postings (key_hash, position)
            SELECT * FROM unnest(\(keys)::bytea[], \(positions)::int8[])
            """, logger: logger)
    }

    /// The positions listed for `key` up to `through`, in order.
    static func positions(of key: Hash256, through: Int64, on connection: PostgresConnection, logger: Logger) async throws -> [Int64] {
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT position FROM ledger_index_postings
            WHERE key_hash = \(ByteBuffer(bytes: key.bytes)) AND position <= \(through) ORDER BY position
            """, logger: logger)
        var positions: [Int64] = []
        for try await position in rows.decode(Int64.self) { positions.append(position) }
        return positions
    }

    /// The log's leaves (`ledger_leaf`, the bytes the log hashes and its tiles serve) after
    /// position `after`, at most `limit`, in position order. Throws unless they are exactly the
    /// positions `after + 1`, `after + 2`, …: the log has no holes.
    static func leaves(after: Int64, limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> [[UInt8]] {
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT e.position,
                   ledger_leaf(e.position, e.stream_id, e.version, e.event_id, e.event_type, e.data::text, e.metadata::text, e.recorded_at)
            FROM ledger_events e WHERE e.position > \(after) ORDER BY e.position LIMIT \(limit)
            """, logger: logger)
        var leaves: [[UInt8]] = []
        for try await (position, leaf) in rows.decode((Int64, ByteBuffer).self) {
            guard position == after + Int64(leaves.count) + 1 else {
                throw IndexStoreError("the log has position \(position) where \(after + Int64(leaves.count) + 1) should be")
            }
            leaves.append(Array(buffer: leaf))
        }
        return leaves
    }

    /// Whether the log holds an event other than an index revision record at a position in
    /// `after + 1 … through`.
    static func namesAnything(after: Int64, through: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT EXISTS (
                SELECT 1 FROM ledger_events
                WHERE position > \(after) AND position <= \(through) AND stream_id <> \(IndexRevision.stream)
            )
            """, logger: logger)
        for try await found in rows.decode(Bool.self) { return found }
        return false
    }

    /// The newest revision record at or below position `through` (one a checkpoint of that size
    /// covers), with its position; nil when none is. By version, newest first, on the stream's
    /// unique (stream_id, version) index: a stream's versions rise with its positions.
    static func recorded(
        through: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> (position: Int64, revision: IndexRevision)? {
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT position, event_type, data::text FROM ledger_events
            WHERE stream_id = \(IndexRevision.stream) AND position <= \(through) ORDER BY version DESC LIMIT 1
            """, logger: logger)
        for try await (position, type, data) in rows.decode((Int64, String, String).self) {
            return (position, try IndexRevision(streamId: IndexRevision.stream, type: type, data: data))
        }
        return nil
    }

    /// The disk the index's tables take, their indexes and TOAST included (`pg_total_relation_size`).
    static func diskBytes(on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let rows = try await connection.queryUnlessClosed(
            "SELECT pg_total_relation_size('ledger_index_nodes') + pg_total_relation_size('ledger_index_state') + pg_total_relation_size('ledger_index_postings')",
            logger: logger)
        for try await bytes in rows.decode(Int64.self) { return bytes }
        return 0
    }
}
