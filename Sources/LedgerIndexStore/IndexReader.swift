import LedgerIndex
import LedgerPostgres
import Logging
import PostgresNIO

/// Reads of the stored index, each in one snapshot: the covered size, its root and the nodes
/// that make it, as one commit of the folder left them, never a mix of two.
public struct IndexReader: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The state the last committed fold left.
    public func state() async throws -> IndexState {
        try await client.withConnection { try await IndexTables.state(on: $0, logger: logger) }
    }

    /// Runs `body` on the state and the tree of one snapshot (a read-only, repeatable-read
    /// transaction): `tree.root()` there is `state.root` unless the nodes were changed by hand.
    /// The tree must not be used after `body` returns.
    public func read<T: Sendable>(_ body: (IndexState, PrefixTree<PostgresNodeStore>) async throws -> T) async throws -> T {
        try await client.transaction(logger: logger) { connection in
            try await connection.queryUnlessClosed("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            let state = try await IndexTables.state(on: connection, logger: logger)
            return try await body(state, PrefixTree(store: PostgresNodeStore(connection: connection, logger: logger)))
        }
    }

    /// The newest revision recorded at or below position `through` (a checkpoint of that size
    /// covers its record), with the record's position; nil when none is.
    public func recorded(through: Int64) async throws -> (position: Int64, revision: IndexRevision)? {
        try await client.withConnection { try await IndexTables.recorded(through: through, on: $0, logger: logger) }
    }

    /// `key`'s proof under the kept revision `revision` and the positions listed for it up to
    /// its size, in one snapshot: the tree as the fold through its size left it. Refused unless
    /// the nodes there make the revision's root: a size past the kept one, or one never kept
    /// (folds after it rewrote its rows), or nodes changed by hand, never answer a proof that
    /// would not verify.
    public func lookup(_ key: IndexKey, revision: IndexRevision) async throws -> (proof: PrefixProof, positions: [Int64]) {
        try await client.transaction(logger: logger) { connection in
            try await connection.queryUnlessClosed("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            let kept = try await IndexTables.keptSize(on: connection, logger: logger)
            guard revision.logSize <= kept else {
                throw IndexStoreError("revision \(revision.logSize) is not kept: the index keeps revisions up to \(kept)")
            }
            let tree = PrefixTree(store: PostgresNodeStore(connection: connection, logger: logger, revision: revision.logSize))
            guard try await tree.root() == revision.root else {
                throw IndexStoreError("the index's nodes at \(revision.logSize) do not make the root recorded for it: not a kept revision")
            }
            let proof = try await tree.proof(for: key.hash)
            return (proof, try await IndexTables.positions(of: key.hash, through: revision.logSize, on: connection, logger: logger))
        }
    }

    /// The disk the index's tables take now, indexes included.
    public func diskBytes() async throws -> Int64 {
        try await client.withConnection { try await IndexTables.diskBytes(on: $0, logger: logger) }
    }
}
