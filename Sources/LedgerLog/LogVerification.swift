import LedgerDomain
import LedgerStore
import TransparencyLog

/// Walks the whole log from the first event: the hash chain, and the Merkle tree recomputed
/// from the events themselves (never from stored nodes), checked against a checkpoint the
/// auditor saved and against the newest checkpoint the database holds.
public struct LogVerification: Sendable {
    public struct Report: Sendable, Equatable {
        /// Events whose hash was recomputed and matched.
        public var checked: Int64
        public var headPosition: Int64
        /// The first break in the chain, nil when the chain is intact.
        public var failure: HashChain.Failure?
        /// What is wrong against the saved checkpoint (or the stored one), nil when nothing.
        public var checkpointFailure: CheckpointFailure?
        /// The tree's root over every event, recomputed.
        public var root: MerkleTree.Hash
    }

    public enum CheckpointFailure: Sendable, Equatable, CustomStringConvertible {
        /// The log holds fewer events than the checkpoint covers.
        case truncated(logSize: Int64, checkpointSize: Int64)
        /// The events up to the checkpoint's size do not give its root; `firstDifferent` is the
        /// first position of the first pair of events (2k+1, 2k+2) that differs from the tree
        /// stored when it was written, if found.
        case rewritten(checkpointSize: Int64, firstDifferent: Int64?)
        /// The newest checkpoint in the database does not match the events (signed over a
        /// different history, or altered).
        case storedCheckpointMismatch(size: Int64)

        public var description: String {
            switch self {
            case .truncated(let log, let size):
                "truncated: the log holds \(log) events but the saved checkpoint covers \(size)"
            case .rewritten(let size, let position?):
                "rewritten: the events up to \(size) do not give the saved checkpoint's root; position \(position) or \(position + 1) differs from the tree stored when it was written"
            case .rewritten(let size, nil):
                "rewritten: the events up to \(size) do not give the saved checkpoint's root"
            case .storedCheckpointMismatch(let size):
                "the newest stored checkpoint (size \(size)) does not match the events"
            }
        }
    }

    let store: EventStore
    let tree: LogTree?
    let batchSize: Int

    public init(store: EventStore, tree: LogTree? = nil, batchSize: Int = 10_000) {
        self.store = store
        self.tree = tree
        self.batchSize = batchSize
    }

    /// `saved`: a checkpoint the auditor kept (its signature already checked by the caller).
    public func run(saved: Checkpoint? = nil, progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> Report {
        let head = try await store.head()
        let stored = try await tree?.latestCheckpoint()
        var verifier = HashChain.Verifier()
        var frontier = MerkleFrontier()
        var report = Report(checked: 0, headPosition: head.position, root: MerkleTree.emptyRoot)
        var rootAt: [Int64: MerkleTree.Hash] = [0: MerkleTree.emptyRoot]
        let sizes = Set([saved?.size, stored?.size].compactMap { $0 })
        // The next batch is read while this one is hashed.
        let (store, batchSize) = (store, batchSize)
        var next: Task<[RecordedEvent], any Error>? = Task { try await store.readAll(after: 0, limit: batchSize) }
        defer { next?.cancel() }
        walk: while let reading = next {
            let events = try await reading.value
            next = nil
            guard let last = events.last?.position else { break }
            if last < head.position { next = Task { try await store.readAll(after: last, limit: batchSize) } }
            for event in events where event.position <= head.position {
                let leaf = EventLeaf.bytes(event)
                if let failure = verifier.check(event, leaf: leaf) {
                    report.failure = failure
                    break walk
                }
                _ = frontier.append(leafHash: MerkleTree.leafHash(leaf))
                if sizes.contains(frontier.size) { rootAt[frontier.size] = frontier.root }
            }
            progress?(min(last, head.position), head.position)
        }
        report.checked = verifier.checked
        report.root = frontier.root
        if report.failure == nil {
            if verifier.expectedPosition <= head.position {
                report.failure = .init(position: verifier.expectedPosition, reason: .missing(found: nil))
            } else if verifier.previousHash != head.hash {
                report.failure = .init(position: head.position, reason: .headMismatch)
            }
        }
        if let saved {
            if frontier.size < saved.size && report.failure == nil {
                report.checkpointFailure = .truncated(logSize: frontier.size, checkpointSize: saved.size)
            } else if let root = rootAt[saved.size], root != saved.rootHash {
                report.checkpointFailure = .rewritten(
                    checkpointSize: saved.size, firstDifferent: try await firstDifferentPair(upTo: saved.size))
            }
        }
        if report.checkpointFailure == nil, let stored, let root = rootAt[stored.size], root != stored.rootHash {
            report.checkpointFailure = .storedCheckpointMismatch(size: stored.size)
        }
        return report
    }

    /// A hint, on the failure path only: the first pair of events (2k+1, 2k+2) whose node
    /// differs from the level-1 node the checkpointer stored for it (what it hashed before the
    /// rewrite; leaf hashes themselves are not stored). Returns the pair's first position.
    private func firstDifferentPair(upTo size: Int64) async throws -> Int64? {
        guard let tree else { return nil }
        var after: Int64 = 0
        while after + 2 <= size {
            let events = try await store.readAll(after: after, limit: batchSize - batchSize % 2).filter { $0.position <= size - size % 2 }
            if events.count < 2 { return nil }
            let leaves = events.map { MerkleTree.leafHash(EventLeaf.bytes($0)) }
            let stored = try await tree.storedNodes(level: 1, from: after / 2, count: leaves.count / 2)
            for pair in 0..<leaves.count / 2 where MerkleTree.nodeHash(leaves[2 * pair], leaves[2 * pair + 1]) != stored[pair] {
                return events[2 * pair].position
            }
            after = events[leaves.count / 2 * 2 - 1].position
        }
        return nil
    }
}
