import LedgerIndex
import LedgerPostgres
import Logging
import NIOCore
import PostgresNIO

/// Every statement the stored index runs (Migrations/sql/0035_verifiable_index.sql and
/// 0036_index_revisions.sql), each on the connection of the caller's transaction: the callers
/// (`IndexFolder`, `IndexReader`, `IndexRecorder`) decide what runs together.
enum IndexTables {
    /// The nodes at `positions` in the tree of revision `revision` (each position's row with the
    /// largest `log_size` at or below it; nil: the newest rows), in one query; positions with no
    /// node are left out.
    static func nodes(
        at positions: Set<NodePosition>, revision: Int64?, on connection: PostgresConnection, logger: Logger
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
            SELECT p.depth, p.prefix, n.leaf_key, n.digest
            FROM unnest(\(depths)::int2[], \(prefixes)::bytea[]) AS p(depth, prefix)
            CROSS JOIN LATERAL (
                SELECT leaf_key, digest FROM ledger_index_nodes n
                WHERE n.depth = p.depth AND n.prefix = p.prefix AND n.log_size <= \(revision ?? Int64.max)
                ORDER BY n.log_size DESC LIMIT 1
            ) n
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

    /// Puts each node at its position as the fold through `revision` leaves it, in one
    /// statement: over the position's row newer than `kept` (one no kept revision reads; there
    /// is at most one, as every fold after `kept` rewrites it in place), else as a new row at
    /// `revision`. A row rewritten in place keeps its `log_size`, the first fold after `kept` that
    /// wrote the position, so the update changes no indexed column (a HOT update, no index entry
    /// added) and the next kept revision, at or past every fold before it, reads the row as the
    /// last of them left it. The rows at or below `kept` never change. Inside the caller's
    /// transaction, so the nodes commit with the state or not at all.
    static func store(
        _ nodes: [NodePosition: IndexNode], revision: Int64, kept: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
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
            WITH n AS (
                SELECT depth, prefix, NULLIF(leaf_key, ''::bytea) AS leaf_key, digest
                FROM unnest(\(depths)::int2[], \(prefixes)::bytea[], \(keys)::bytea[], \(digests)::bytea[]) AS n(depth, prefix, leaf_key, digest)
            ), moved AS (
                UPDATE ledger_index_nodes t SET leaf_key = n.leaf_key, digest = n.digest
                FROM n WHERE t.depth = n.depth AND t.prefix = n.prefix AND t.log_size > \(kept)
                RETURNING t.depth, t.prefix
            )
            INSERT INTO ledger_index_nodes (depth, prefix, log_size, leaf_key, digest)
            SELECT n.depth, n.prefix, \(revision), n.leaf_key, n.digest FROM n
            WHERE NOT EXISTS (SELECT 1 FROM moved m WHERE m.depth = n.depth AND m.prefix = n.prefix)
            """, logger: logger)
    }

    /// The state row, locked for this transaction, with the kept size; nil while another
    /// transaction holds it (a folder or the recorder at work), without waiting for it.
    static func lockState(on connection: PostgresConnection, logger: Logger) async throws -> (state: IndexState, kept: Int64)? {
        try await state(on: connection, logger: logger, suffix: "FOR UPDATE SKIP LOCKED", missingIsBusy: true)
    }

    /// The state row as this transaction's snapshot sees it.
    static func state(on connection: PostgresConnection, logger: Logger) async throws -> IndexState {
        // Never nil: a missing row throws.
        try await state(on: connection, logger: logger, suffix: "", missingIsBusy: false)!.state
    }

    private static func state(
        on connection: PostgresConnection, logger: Logger, suffix: String, missingIsBusy: Bool
    ) async throws -> (state: IndexState, kept: Int64)? {
        let rows = try await connection.queryUnlessClosed(
            "SELECT log_size, root, kept_size FROM ledger_index_state \(unescaped: suffix)", logger: logger)
        for try await (size, root, kept) in rows.decode((Int64, ByteBuffer, Int64).self) {
            guard let root = Hash256(Array(buffer: root)) else { throw IndexStoreError("a root of another size in ledger_index_state") }
            return (IndexState(logSize: size, root: root), kept)
        }
        if missingIsBusy, try await stateRowExists(on: connection, logger: logger) { return nil }
        throw IndexStoreError("ledger_index_state has no row: run migrations")
    }

    /// The newest kept revision's size (0: none kept).
    static func keptSize(on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        try await state(on: connection, logger: logger, suffix: "", missingIsBusy: false)!.kept
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

    /// Keeps the revision `state` (the row's, locked by the caller): from now on no fold
    /// rewrites a node row at or below its size.
    static func keep(_ state: IndexState, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.queryUnlessClosed(
            """
            UPDATE ledger_index_state SET kept_size = log_size
            WHERE log_size = \(state.logSize) AND root = \(ByteBuffer(bytes: state.root.bytes)) RETURNING log_size
            """, logger: logger)
        var updated = 0
        for try await _ in rows { updated += 1 }
        guard updated == 1 else { throw IndexStoreError("ledger_index_state moved from \(state) while its lock was held") }
    }
}
