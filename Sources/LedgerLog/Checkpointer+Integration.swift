import Logging
import PostgresNIO
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
        return frontier
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
            storing = Task { try await store.storeNodes(batch.nodes, hashes: batch.hashes, on: connection) }
        }
        try await storing?.value
    }
}
