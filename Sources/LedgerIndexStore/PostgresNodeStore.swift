import LedgerIndex
import Logging
import PostgresNIO

/// The prefix tree's nodes on PostgreSQL (`ledger_index_nodes`), read and written on the
/// connection of one transaction: `nodes(at:)` is one query, `store(_:)` one statement.
///
/// Only `IndexFolder` and `IndexReader` make one, inside the transaction they own, and it must
/// not outlive it: the folder's transaction holds the state row's lock and writes the covered
/// size with the nodes, so nodes never commit without it; the reader's is a read-only snapshot,
/// where `store(_:)` fails.
public struct PostgresNodeStore: IndexNodeStore {
    let connection: PostgresConnection
    let logger: Logger

    public func nodes(at positions: Set<NodePosition>) async throws -> [NodePosition: IndexNode] {
        try await IndexTables.nodes(at: positions, on: connection, logger: logger)
    }

    /// All or none: one statement, in the transaction that also writes the covered size.
    public func store(_ nodes: [NodePosition: IndexNode]) async throws {
        try await IndexTables.store(nodes, on: connection, logger: logger)
    }
}
