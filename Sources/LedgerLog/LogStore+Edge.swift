import Foundation
import LedgerPostgres
import Logging
import PostgresNIO
import TransparencyLog

/// The tree's edge (`ledger_tree_edge`, 0027): where the events the stored tree was built from
/// end, and the chain hash of the event there. What lets the checkpointer refuse to integrate
/// over a log that was cut or rewritten at or below its tree (SPEC "Never sign over a rewritten
/// log").
extension LogStore {
    /// What the log holds against its tree.
    enum Edge: Equatable {
        /// No edge recorded yet (a tree built before 0027, or none): nothing to compare.
        case unrecorded
        /// The event at the edge is there, with the chain hash recorded.
        case intact(size: Int64)
        /// The log ends before the edge: events `head + 1 … size` were removed.
        case cut(size: Int64, head: Int64)
        /// The event at the edge has another chain hash: an event at or below it was replaced.
        case rewritten(size: Int64)
    }

    /// Records the edge at `size` (the event there and its chain hash) without new nodes: a tree
    /// built before 0027, once checked against the events.
    func recordEdge(_ size: Int64, on connection: PostgresConnection) async throws {
        try await connection.queryUnlessClosed(
            """
            INSERT INTO ledger_tree_edge (size, chain_hash) SELECT e.position, e.hash FROM ledger_events e WHERE e.position = \(size)
            ON CONFLICT (id) DO UPDATE SET size = excluded.size, chain_hash = excluded.chain_hash
            """, logger: logger)
    }

    func headPosition() async throws -> Int64 {
        try await client.queryUnlessClosed("SELECT position FROM ledger_head", logger: logger) { rows in
            for try await position in rows.decode(Int64.self) { return position }
            return 0
        }
    }

    func edge() async throws -> Edge {
        try await client.queryUnlessClosed(
            """
            SELECT t.size, t.chain_hash = e.hash, h.position
            FROM ledger_head h LEFT JOIN ledger_tree_edge t ON true LEFT JOIN ledger_events e ON e.position = t.size
            """, logger: logger
        ) { rows in
            for try await (size, same, head) in rows.decode((Int64?, Bool?, Int64).self) {
                guard let size else { return .unrecorded }
                if head < size { return .cut(size: size, head: head) }
                return same == true ? .intact(size: size) : .rewritten(size: size)
            }
            return .unrecorded
        }
    }

    /// The first position at or below `size` whose event differs from the one the stored tree
    /// was built from: the first pair (2k+1, 2k+2) whose level-1 node the events no longer give,
    /// or the first missing position (leaf hashes themselves are not stored). A scan of the
    /// whole tree: the refusal's path only. Nil when every pair matches (a change in a last odd
    /// event, which completed no node).
    func firstDifferent(upTo size: Int64) async throws -> Int64? {
        let (left, right) = (
            Self.leafHash.replacingOccurrences(of: "e.", with: "a."), Self.leafHash.replacingOccurrences(of: "e.", with: "b.")
        )
        return try await client.queryUnlessClosed(
            """
            SELECT min(n.index) * 2 + 1 FROM ledger_tree_nodes n
            LEFT JOIN ledger_events a ON a.position = n.index * 2 + 1
            LEFT JOIN ledger_events b ON b.position = n.index * 2 + 2
            WHERE n.level = 1 AND n.index < \(size) / 2
              AND (a.position IS NULL OR b.position IS NULL OR n.hash <> sha256('\\x01'::bytea || \(unescaped: left) || \(unescaped: right)))
            """, logger: logger
        ) { rows in
            for try await first in rows.decode(Int64?.self) { return first }
            return nil
        }
    }
}
