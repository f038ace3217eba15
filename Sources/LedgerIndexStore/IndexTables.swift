import LedgerIndex
import LedgerPostgres
import Logging
import NIOCore
import PostgresNIO

/// Every statement the stored index runs (Migrations/sql/0035_verifiable_index.sql), each on the
/// connection of the caller's transaction: the callers (`IndexFolder`, `IndexReader`) decide
/// what runs together.
enum IndexTables {
    /// The nodes at `positions`, in one query; positions with no node are left out.
    static func nodes(
        at positions: Set<NodePosition>, on connection: PostgresConnection, logger: Logger
    ) async throws -> [NodePosition: IndexNode] {
        guard !positions.isEmpty else { return [:] }
        var depths: [Int16] = []
        var prefixes: [ByteBuffer] = []
        depths.reserveCapacity(positions.count)
        prefixes.reserveCapacity(positions.count)
        for position in positions {
            depths.append(Int16(position.depth))
            prefixes.append(ByteBuffer(bytes: position.prefix))
        }
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT n.depth, n.prefix, n.leaf_key, n.digest
            FROM unnest(\(depths)::int2[], \(prefixes)::bytea[]) AS p(depth, prefix)
            JOIN ledger_index_nodes n ON n.depth = p.depth AND n.prefix = p.prefix
            """, logger: logger)
        var found: [NodePosition: IndexNode] = [:]
        found.reserveCapacity(positions.count / 4)
        for try await (depth, prefix, key, digest) in rows.decode((Int16, ByteBuffer, ByteBuffer?, ByteBuffer).self) {
            guard let position = NodePosition(depth: Int(depth), prefix: Array(buffer: prefix)),
                let digest = Hash256(Array(buffer: digest))
            else { throw IndexStoreError("a row of ledger_index_nodes at depth \(depth) that is not a node") }
            if let key {
                guard let key = Hash256(Array(buffer: key)) else { throw IndexStoreError("a leaf key of another size at \(position)") }
                found[position] = .leaf(key: key, value: digest)
            } else {
                found[position] = .parent(hash: digest)
            }
        }
        return found
    }

    /// Puts each node at its position, in one statement: an insert, or an update of the node
    /// there. Inside the caller's transaction, so the nodes commit with the state or not at all.
    static func store(_ nodes: [NodePosition: IndexNode], on connection: PostgresConnection, logger: Logger) async throws {
        guard !nodes.isEmpty else { return }
        var depths: [Int16] = []
        var prefixes: [ByteBuffer] = []
        // A parent's key is the empty bytea, which NULLIF makes NULL (PostgresNIO sends no
        // array with NULL elements).
        var keys: [ByteBuffer] = []
        var digests: [ByteBuffer] = []
        for (position, node) in nodes {
            depths.append(Int16(position.depth))
            prefixes.append(ByteBuffer(bytes: position.prefix))
            switch node {
            case .leaf(let key, let value):
                keys.append(ByteBuffer(bytes: key.bytes))
                digests.append(ByteBuffer(bytes: value.bytes))
            case .parent(let hash):
                keys.append(ByteBuffer())
                digests.append(ByteBuffer(bytes: hash.bytes))
            }
        }
        try await connection.queryUnlessClosed(
            """
            INSERT INTO ledger_index_nodes (depth, prefix, leaf_key, digest)
            SELECT n.depth, n.prefix, NULLIF(n.leaf_key, ''::bytea), n.digest
            FROM unnest(\(depths)::int2[], \(prefixes)::bytea[], \(keys)::bytea[], \(digests)::bytea[]) AS n(depth, prefix, leaf_key, digest)
            ON CONFLICT (depth, prefix) DO UPDATE SET leaf_key = excluded.leaf_key, digest = excluded.digest
            """, logger: logger)
    }

    /// The state row, locked for this transaction; nil while another transaction holds it (a
    /// folder at work), without waiting for it.
    static func lockState(on connection: PostgresConnection, logger: Logger) async throws -> IndexState? {
        try await state(on: connection, logger: logger, suffix: "FOR UPDATE SKIP LOCKED", missingIsBusy: true)
    }

    /// The state row as this transaction's snapshot sees it.
    static func state(on connection: PostgresConnection, logger: Logger) async throws -> IndexState {
        // Never nil: a missing row throws.
        try await state(on: connection, logger: logger, suffix: "", missingIsBusy: false)!
    }

    private static func state(
        on connection: PostgresConnection, logger: Logger, suffix: String, missingIsBusy: Bool
    ) async throws -> IndexState? {
        let rows = try await connection.queryUnlessClosed(
            "SELECT log_size, root FROM ledger_index_state \(unescaped: suffix)", logger: logger)
        for try await (size, root) in rows.decode((Int64, ByteBuffer).self) {
            guard let root = Hash256(Array(buffer: root)) else { throw IndexStoreError("a root of another size in ledger_index_state") }
            return IndexState(logSize: size, root: root)
        }
        if missingIsBusy, try await stateRowExists(on: connection, logger: logger) { return nil }
        throw IndexStoreError("ledger_index_state has no row: run migrations")
    }

    private static func stateRowExists(on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.queryUnlessClosed("SELECT count(*) FROM ledger_index_state", logger: logger)
        for try await count in rows.decode(Int64.self) { return count == 1 }
        return false
    }

    /// Moves the state from `previous` to `next`; throws unless the row was at `previous` (the
    /// caller holds its lock, so anything else is a bug or a hand at work).
    static func advance(from previous: IndexState, to next: IndexState, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.queryUnlessClosed(
            """
            UPDATE ledger_index_state SET log_size = \(next.logSize), root = \(ByteBuffer(bytes: next.root.bytes))
            WHERE log_size = \(previous.logSize) AND root = \(ByteBuffer(bytes: previous.root.bytes)) RETURNING log_size
            """, logger: logger)
        var updated = 0
        for try await _ in rows { updated += 1 }
        guard updated == 1 else { throw IndexStoreError("ledger_index_state moved from \(previous) while its lock was held") }
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

    /// The disk the index's tables take, their indexes and TOAST included (`pg_total_relation_size`).
    static func diskBytes(on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let rows = try await connection.queryUnlessClosed(
            "SELECT pg_total_relation_size('ledger_index_nodes') + pg_total_relation_size('ledger_index_state')", logger: logger)
        for try await bytes in rows.decode(Int64.self) { return bytes }
        return 0
    }
}
