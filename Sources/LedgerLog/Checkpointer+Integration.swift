import Logging
import PostgresNIO
import Synchronization
import TransparencyLog

/// Growing the stored tree: reads from the store, the integration itself
/// (`MerkleIntegration.integrate`, pure), writes through the store.
extension Checkpointer {
    /// The frontier of the stored tree, checked against the checkpoint of its size if any (a
    /// `ForkRefusal` if it differs). Only levels 1 and up are stored, so the stored tree ends at
    /// an even size: a last odd leaf, which completed no node, is simply integrated again.
    func load(_ connection: PostgresConnection) async throws -> MerkleFrontier {
        let size = try await store.storedTreeSize(on: connection)
        let nodes = MerkleFrontier.nodes(size: size)
        let stored = try await store.nodes(nodes)
        let frontier = try MerkleFrontier(size: size, hashes: nodes.compactMap { stored[$0] })
        if let root = try await store.signedRoot(size: size, on: connection), root != frontier.root {
            // Nodes are built from the events: other events at those positions (a cut log written
            // to again) gave them. A fork, refused and counted like the floor's.
            throw ForkRefusal.refuse(
                "the stored tree of size \(size) does not give the root of the checkpoint of that size: "
                    + "the log's first \(size) events changed",
                log: signer.name, logger: logger, metadata: ["tree": "\(size)"])
        }
        if try await store.edge() == .unrecorded, size > 0 {
            // A tree built before its edge was recorded (0027): checked against the events once,
            // then its edge recorded.
            try await checkEdge(frontier, upTo: size)
            try await store.recordEdge(size, on: connection)
        }
        try await checkEdge(frontier)
        return frontier
    }

    /// Refuses (a `ForkRefusal`, counted and alerted) unless the log still holds, up to the
    /// tree's edge, the events the tree was built from (SPEC "Never sign over a rewritten log"):
    /// a log cut below it, or changed at or below it, is never integrated over, even once it has
    /// grown past it again. The check is a function of what is stored, so the refusal stands
    /// until an operator puts the events back (OPERATIONS, "Failover: the fork alert").
    /// `upTo`: no edge recorded yet; the stored tree of that size checked pair by pair instead.
    func checkEdge(_ frontier: MerkleFrontier, upTo unrecorded: Int64? = nil) async throws {
        let why: String
        let edge: LogStore.Edge
        if let unrecorded {
            edge = try await firstDifferent(unrecorded) == nil ? .intact(size: unrecorded) : .rewritten(size: unrecorded)
        } else {
            edge = try await store.edge()
        }
        switch edge {
        case .unrecorded, .intact:
            return
        case .cut(let size, let head):
            why = "the log ends at position \(head) but its tree was built over \(size) events: events \(head + 1)…\(size) were removed"
        case .rewritten(let size):
            let first = try await firstDifferent(size)
            why =
                "the events up to position \(size) are not those the tree was built from: "
                + (first.map { "position \($0) or \($0 + 1) differs (the first pair that does)" } ?? "position \(size) differs")
        }
        throw ForkRefusal.refuse(why + "; not signing", log: signer.name, logger: logger, metadata: ["tree": "\(frontier.size)"])
    }

    /// `LogStore.firstDifferent`, a scan of the whole tree, once per log head while refused
    /// (the refusal is looked at again every 10 s).
    func firstDifferent(_ size: Int64) async throws -> Int64? {
        let key = [size, try await store.headPosition()]
        if let known = scans.found.withLock({ $0[key] }) { return known }
        let first = try await store.firstDifferent(upTo: size)
        scans.found.withLock { $0 = [key: first] }
        return first
    }

    /// Adds the events after the frontier through `through` to the tree, a batch at a time, in
    /// a pipeline: while one batch's nodes are stored (one statement, on the lease's
    /// connection), the next batch is integrated and the one after it read (on a pooled
    /// connection: reads need no lease).
    func integrate(_ connection: PostgresConnection, _ frontier: inout MerkleFrontier, through: Int64) async throws {
        let (store, batchSize, logger) = (store, batchSize, logger)
        func read(after: Int64) -> Task<[MerkleTree.Hash], any Error> {
            Task { try await store.leafHashesFromEvents(after: after, through: min(through, after + batchSize)) }
        }
        var reading = read(after: frontier.size)
        var storing: Task<Void, any Error>?
        defer {
            reading.cancel()
            storing?.cancel()
        }
        while frontier.size < through {
            let leaves = try await reading.value
            let end = frontier.size + Int64(leaves.count)
            if end < through { reading = read(after: end) }
            let batch = MerkleIntegration.integrate(frontier, leafHashes: leaves)
            frontier = batch.frontier
            try await storing?.value
            if end < through { logger.info("building the log's tree", metadata: ["events": "\(end)", "of": "\(through)"]) }
            storing = Task { try await store.storeNodes(batch.nodes, hashes: batch.hashes, through: end, on: connection) }
        }
        try await storing?.value
    }
}

/// The scans a refused checkpointer made (one kept: the refusal's).
final class FirstDifferentScans: Sendable {
    let found = Mutex<[[Int64]: Int64?]>([:])
}
