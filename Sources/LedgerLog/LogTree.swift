import Foundation
import LedgerStore
import LedgerWire
import Logging
import PostgresNIO
import TransparencyLog

/// The log's Merkle tree and published checkpoints as readers ask for them: inclusion and
/// consistency proofs from the stored nodes (one lookup of O(log n) nodes each), the
/// checkpoints they verify against, the log's status and key. Its statements are
/// `LogStore`'s; the checkpointer writes what it reads.
public struct LogTree: Sendable {
    let store: LogStore

    public init(client: PostgresClient, logger: Logger) {
        self.init(store: LogStore(client: client, logger: logger))
    }

    init(store: LogStore) {
        self.store = store
    }

    /// A published checkpoint as stored.
    public typealias StoredCheckpoint = LogStore.StoredCheckpoint

    // MARK: Proofs

    /// The hashes of `ranges` (each a range the RFC's recursion names), from one lookup of
    /// the nodes under them. Throws if a node is missing (the tree is behind).
    public func hashes(of ranges: [Range<Int64>]) async throws -> [MerkleTree.Hash] {
        let stored = try await store.nodes(Array(Set(ranges.flatMap(MerkleTree.nodes(covering:)))))
        return try ranges.map { range in
            guard let hash = MerkleTree.hash(of: range, node: { stored[$0] }) else {
                throw StoreError.invalidRequest("the tree has no nodes for leaves \(range) yet")
            }
            return hash
        }
    }

    /// The leaf hash of the event at `position` and its inclusion proof in the tree of `size`.
    public func inclusionProof(position: Int64, size: Int64) async throws -> (leafHash: MerkleTree.Hash, hashes: [MerkleTree.Hash]) {
        try await inclusionProofs(positions: [position], size: size)[0]
    }

    /// The leaf hash and inclusion proof in the tree of `size` of each event at `positions`
    /// (each from 1 to `size`), in their order; the nodes of them all read in one query.
    public func inclusionProofs(
        positions: [Int64], size: Int64
    ) async throws -> [(leafHash: MerkleTree.Hash, hashes: [MerkleTree.Hash])] {
        let ranges = positions.map { [($0 - 1)..<$0] + MerkleTree.inclusionRanges(leaf: $0 - 1, size: size) }
        let all = try await hashes(of: ranges.flatMap { $0 })
        var first = 0
        return ranges.map { proof in
            defer { first += proof.count }
            return (all[first], Array(all[(first + 1)..<(first + proof.count)]))
        }
    }

    public func consistencyProof(from: Int64, to: Int64) async throws -> [MerkleTree.Hash] {
        try await hashes(of: MerkleTree.consistencyRanges(from: from, to: to))
    }

    /// The stored nodes of one level with indexes `from ..< from + count`; nil where none is stored.
    public func storedNodes(level: Int, from: Int64, count: Int) async throws -> [MerkleTree.Hash?] {
        try await store.storedNodes(level: level, from: from, count: count)
    }

    /// The leaf hashes of the events at positions `after + 1 ... through`, computed by
    /// PostgreSQL from the stored events (`ledger_leaf`). Throws unless every position is there.
    public func leafHashesFromEvents(after: Int64, through: Int64) async throws -> [MerkleTree.Hash] {
        try await store.leafHashesFromEvents(after: after, through: through)
    }

    // MARK: Checkpoints

    /// The latest published checkpoint (Migrations/sql/0018): the only kind served anywhere.
    public func latestCheckpoint() async throws -> StoredCheckpoint? {
        try await store.latestPublished()
    }

    /// The published checkpoint of `size`; nil when none is.
    public func checkpoint(size: Int64) async throws -> StoredCheckpoint? {
        try await store.published(size: size)
    }

    /// Waits until a checkpoint of at least `size` is signed (polling every 20 ms); throws
    /// `CheckpointError` after `timeout` (no checkpointer running, or one that stopped).
    public func checkpoint(atLeast size: Int64, within timeout: Duration) async throws -> StoredCheckpoint {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let latest = try await latestCheckpoint(), latest.size >= size { return latest }
            guard ContinuousClock.now < deadline else { throw CheckpointError("no checkpoint of size \(size) or more within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The log's head, when the latest published checkpoint was signed, and the age of the oldest
    /// event it does not cover yet (0 when it covers them all).
    public func status() async throws -> (head: Int64, signedAt: Date?, lagSeconds: Double) {
        try await store.status()
    }

    /// The stored tree against the log: its size and `intact`, `cut` or `rewritten`
    /// (`LogStore+Edge`).
    public func integrity() async throws -> LogStatus.Tree {
        switch try await store.edge() {
        case .unrecorded: LogStatus.Tree(size: 0, state: "unrecorded")
        case .intact(let size): LogStatus.Tree(size: size, state: "intact")
        case .cut(let size, _): LogStatus.Tree(size: size, state: "cut")
        case .rewritten(let size): LogStatus.Tree(size: size, state: "rewritten")
        }
    }

    /// The newest verifier key the checkpointer has signed with.
    public func verifierKey() async throws -> String? {
        try await store.verifierKey()
    }
}
