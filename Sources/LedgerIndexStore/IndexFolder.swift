import LedgerIndex
import LedgerPostgres
import Logging
import PostgresNIO

/// Folds the log into the stored index, a batch at a time: reads the leaves after the covered
/// size N, folds them into the tree (`LogIndex`) and writes the changed nodes, each key's new
/// positions and the new N in one transaction. A batch that fails anywhere (an error, a lost connection, a crash) leaves
/// the previous N and the nodes that make its root; the next fold starts from there.
///
/// **One writer.** The transaction begins by locking the one state row, `FOR UPDATE SKIP
/// LOCKED`, and holds it to its commit: a second folder, in this process or another, finds the
/// row locked and answers `.busy` at once, writing nothing. We chose the row lock over a session
/// advisory lock (`AdvisoryLease`) because it is the row the batch writes, so the lock and the
/// write cannot part (a folder that lost its session lost its transaction too), it needs no
/// connection held between batches, and it waits for nobody: a busy folder tries again later.
public struct IndexFolder: Sendable {
    /// What one `fold` did.
    public enum Outcome: Hashable, Sendable {
        /// Folded the positions `from + 1 … state.logSize`: `state` is committed.
        case folded(from: Int64, state: IndexState)
        /// No event after the covered size: `state` as it is.
        case upToDate(IndexState)
        /// Another folder holds the state row: nothing read, nothing written.
        case busy
    }

    /// Test seams: code run inside a batch's transaction.
    public struct Hooks: Sendable {
        /// After the nodes are written, before the new size is: a throw here rolls both back.
        public var afterNodes: (@Sendable (_ from: Int64, _ through: Int64) async throws -> Void)?

        public init(afterNodes: (@Sendable (_ from: Int64, _ through: Int64) async throws -> Void)? = nil) {
            self.afterNodes = afterNodes
        }
    }

    let client: PostgresClient
    let logger: Logger
    /// Most leaves folded in one transaction.
    public let batchSize: Int
    let hooks: Hooks

    public init(client: PostgresClient, logger: Logger, batchSize: Int = 5_000, hooks: Hooks = Hooks()) {
        precondition(batchSize > 0, "a batch holds at least one leaf")
        self.client = client
        self.logger = logger
        self.batchSize = batchSize
        self.hooks = hooks
    }

    /// Folds the next batch of at most `batchSize` leaves, in one transaction.
    public func fold() async throws -> Outcome {
        try await client.transaction(logger: logger) { connection in
            guard let (previous, kept) = try await IndexTables.lockState(on: connection, logger: logger) else { return .busy }
            let leaves = try await IndexTables.leaves(after: previous.logSize, limit: batchSize, on: connection, logger: logger)
            guard !leaves.isEmpty else { return .upToDate(previous) }
            let through = previous.logSize + Int64(leaves.count)
            let store = PostgresNodeStore(connection: connection, logger: logger, writes: .init(revision: through, kept: kept))
            let folded = try await LogIndex(store: store).fold(leaves, from: previous.logSize + 1)
            try await IndexTables.post(folded.entries, on: connection, logger: logger)
            try await hooks.afterNodes?(previous.logSize + 1, through)
            let next = IndexState(logSize: through, root: folded.root)
            try await IndexTables.advance(from: previous, to: next, on: connection, logger: logger)
            return .folded(from: previous.logSize, state: next)
        }
    }

    /// Folds batches until the index covers the log as it was when the last batch read it,
    /// another folder holds the state row, or `deadline` has passed (under steady appends a
    /// batch nearly always finds a new leaf, so a caller with other work bounds the round);
    /// answers the last outcome (`.upToDate`, `.busy`, or the last `.folded` at the deadline)
    /// and how many batches were committed.
    public func catchUp(until deadline: ContinuousClock.Instant? = nil) async throws -> (outcome: Outcome, batches: Int) {
        var batches = 0
        while true {
            let outcome = try await fold()
            guard case .folded = outcome else { return (outcome, batches) }
            batches += 1
            if let deadline, ContinuousClock.now >= deadline { return (outcome, batches) }
        }
    }
}
