import LedgerIndex
import Logging
import PostgresNIO

/// The prefix tree's nodes on PostgreSQL (`ledger_index_nodes`), read and written on the
/// connection of one transaction: `nodes(at:)` is one query, `store(_:)` one statement.
///
/// A store reads one revision's tree: the folder's, the newest rows (`revision` nil), which it
/// writes at the size its fold covers (`writes`); a reader's, revision N, the rows as the fold
/// through N left them, which no later fold changes once N is kept (`IndexTables.store`).
///
/// Only `IndexFolder` and `IndexReader` make one, inside the transaction they own, and it must
/// not outlive it: the folder's transaction holds the state row's lock and writes the covered
/// size with the nodes, so nodes never commit without it; the reader's is a read-only snapshot,
/// where `store(_:)` fails.
public struct PostgresNodeStore: IndexNodeStore {
    /// Where a fold writes: the size it covers, and the kept size below which no row changes.
    struct Writes: Sendable {
        var revision: Int64
        var kept: Int64
    }

    let connection: PostgresConnection
    let logger: Logger
    /// The revision read (nil: the newest rows).
    let revision: Int64?
    /// Nil for a reader: a store that never writes.
    let writes: Writes?

    init(connection: PostgresConnection, logger: Logger, revision: Int64? = nil, writes: Writes? = nil) {
        (self.connection, self.logger, self.revision, self.writes) = (connection, logger, revision, writes)
    }

    public func nodes(at positions: Set<NodePosition>) async throws -> [NodePosition: IndexNode] {
        try await IndexTables.nodes(at: positions, revision: revision, on: connection, logger: logger)
    }

    /// All or none: one statement, in the transaction that also writes the covered size.
    public func store(_ nodes: [NodePosition: IndexNode]) async throws {
        guard let writes else { throw IndexStoreError("a reader's tree is not written") }
        try await IndexTables.store(nodes, revision: writes.revision, kept: writes.kept, on: connection, logger: logger)
    }
}
