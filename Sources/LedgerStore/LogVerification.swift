import LedgerDomain

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
        /// first position whose leaf differs from the tree stored when it was written, if found.
        case rewritten(checkpointSize: Int64, firstDifferent: Int64?)
        /// The newest checkpoint in the database does not match the events (signed over a
        /// different history, or altered).
        case storedCheckpointMismatch(size: Int64)

        public var description: String {
            switch self {
            case .truncated(let log, let size):
                "truncated: the log holds \(log) events but the saved checkpoint covers \(size)"
            case .rewritten(let size, let position?):
                "rewritten: the events up to \(size) do not give the saved checkpoint's root; position \(position) differs from the tree stored when it was written"
            case .rewritten(let size, nil):
                "rewritten: the events up to \(size) do not give the saved checkpoint's root"
            case .storedCheckpointMismatch(let size):
                "the newest stored checkpoint (size \(size)) does not match the events"
            }
        }
    }

    let store: any EventStore
    let tree: LogTree?
    let batchSize: Int

    public init(store: any EventStore, tree: LogTree? = nil, batchSize: Int = 10_000) {
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
        var after: Int64 = 0
        walk: while after < head.position {
            let events = try await store.readAll(after: after, limit: batchSize)
            if events.isEmpty { break }
            for event in events where event.position <= head.position {
                if let failure = verifier.check(event) {
                    report.failure = failure
                    break walk
                }
                _ = frontier.append(leafHash: MerkleTree.leafHash(EventLeaf.bytes(event)))
                if sizes.contains(frontier.size) { rootAt[frontier.size] = frontier.root }
            }
            after = events.last!.position
            progress?(min(after, head.position), head.position)
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
                report.checkpointFailure = .rewritten(checkpointSize: saved.size, firstDifferent: try await firstDifferentLeaf(upTo: saved.size))
            }
        }
        if report.checkpointFailure == nil, let stored, let root = rootAt[stored.size], root != stored.rootHash {
            report.checkpointFailure = .storedCheckpointMismatch(size: stored.size)
        }
        return report
    }

    /// A hint, on the failure path only: the first event whose leaf hash differs from the
    /// level-0 node the checkpointer stored for it (what it hashed before the rewrite).
    private func firstDifferentLeaf(upTo size: Int64) async throws -> Int64? {
        guard let tree else { return nil }
        var after: Int64 = 0
        while after < size {
            let events = try await store.readAll(after: after, limit: batchSize).filter { $0.position <= size }
            if events.isEmpty { return nil }
            let stored = try await tree.leafHashes(from: events[0].position, count: events.count)
            for (event, storedHash) in zip(events, stored) where MerkleTree.leafHash(EventLeaf.bytes(event)) != storedHash {
                return event.position
            }
            after = events.last!.position
        }
        return nil
    }
}
