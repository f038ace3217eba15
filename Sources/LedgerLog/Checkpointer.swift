import Foundation
import LedgerDomain
import LedgerStore
import TransparencyLog
import LedgerPostgres
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle

/// Grows the log's Merkle tree and signs a checkpoint whenever the log has grown.
///
/// **One signer.** It works on one connection holding a session advisory lock (the lease):
/// a second checkpointer waits until the first one's connection is gone, so two never sign
/// different trees of the same size. Every checkpoint is kept (`ledger_checkpoints`).
///
/// **From the events.** Leaf hashes are computed by PostgreSQL from the stored events
/// (`ledger_leaf`), folded into the frontier here, and the nodes above the leaves that they
/// complete are stored, one statement a batch; the root it signs is the frontier's, never a
/// stored node's.
/// On start the frontier is loaded from the stored nodes and must give the root of the last
/// checkpoint of that size, and the log must hold at least as many events as the tree.
///
/// **Backfill.** A log older than the tree (an upgrade) is integrated in batches, with progress
/// in the log, then signed once caught up.
public struct Checkpointer: Service {
    let client: PostgresClient
    let signer: NoteSigner
    let events: NotificationHub
    let logger: Logger
    /// At most one checkpoint per interval while appends go on.
    let interval: Duration
    let batchSize: Int64
    /// With a witness policy, a checkpoint is published once its quorum has cosigned it.
    let witnesses: WitnessClient?

    public init(
        client: PostgresClient, signer: NoteSigner, events: NotificationHub, logger: Logger,
        interval: Duration = .milliseconds(200), batchSize: Int64 = 50_000, witnesses: WitnessClient? = nil
    ) {
        self.client = client
        self.signer = signer
        self.events = events
        self.logger = logger
        self.interval = interval
        self.batchSize = batchSize
        self.witnesses = witnesses
    }

    /// Any number serves, as long as it is the same everywhere ("CHKPT").
    static let leaseKey: Int64 = 0x43_484B_5054

    public func run() async throws {
        let wake = events.register()
        defer { wake.cancel() }
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        guard try await lease(connection) else { return }
                        logger.info("checkpointer signing", metadata: ["key": "\(signer.verifier.text)"])
                        // The lock belongs to the session, and the connection goes back to the
                        // pool: give the lease up however the work ends (a closed connection
                        // has already lost it).
                        do {
                            try await work(connection, wake: wake)
                        } catch {
                            _ = try? await connection.queryUnlessClosed("SELECT pg_advisory_unlock(\(Self.leaseKey))", logger: logger)
                            throw error
                        }
                        _ = try? await connection.queryUnlessClosed("SELECT pg_advisory_unlock(\(Self.leaseKey))", logger: logger)
                    }
                } catch {
                    if Task.isCancelled { break }
                    logger.warning("checkpointer: stopped; retrying", metadata: ["error": "\(String(reflecting: error))"])
                }
                // Not the lease holder, or the connection was lost: look again shortly.
                _ = await wake.wait(timeout: .seconds(1))
            }
        }
    }

    private func lease(_ connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.queryUnlessClosed("SELECT pg_try_advisory_lock(\(Self.leaseKey))", logger: logger)
        for try await locked in rows.decode(Bool.self) { return locked }
        return false
    }

    private func work(_ connection: PostgresConnection, wake: NotificationHub.Subscription) async throws {
        try await connection.queryUnlessClosed(
            "INSERT INTO ledger_log_keys (verifier_key) VALUES (\(signer.verifier.text)) ON CONFLICT DO NOTHING", logger: logger)
        var frontier = try await load(connection)
        var signed = ContinuousClock.now - interval
        var signedSize: Int64 = -1
        while !Task.isCancelled {
            let head = try await headPosition(connection)
            guard head >= frontier.size else {
                throw CheckpointError("the log ends at position \(head) but its tree holds \(frontier.size) events: events were removed; not signing")
            }
            if head > frontier.size { try await integrate(connection, &frontier, through: head) }
            // Signed once per size (a size signed by an earlier run is not signed again either).
            if frontier.size != signedSize, try await sign(connection, frontier) {
                signed = ContinuousClock.now
                Gauge(label: "ledger_checkpoint_size").record(frontier.size)
                Gauge(label: "ledger_checkpoint_signed_seconds").record(Date().timeIntervalSince1970)
            }
            signedSize = frontier.size
            if witnesses != nil { try await publish(connection) }
            // Wait for the next append, then let appends gather for the rest of the interval.
            if try await headPosition(connection) == frontier.size { _ = await wake.wait(timeout: .seconds(1)) }
            let next = signed + interval
            if next > .now { try await Task.sleep(until: next) }
        }
    }

    /// The frontier of the stored tree, checked against the checkpoint of its size if any. Only
    /// levels 1 and up are stored, so the stored tree ends at an even size: a last odd leaf,
    /// which completed no node, is simply integrated again.
    private func load(_ connection: PostgresConnection) async throws -> MerkleFrontier {
        var size: Int64 = 0
        for try await pairs in try await connection.queryUnlessClosed(
            "SELECT coalesce(max(index) + 1, 0) FROM ledger_tree_nodes WHERE level = 1", logger: logger
        ).decode(Int64.self) { size = 2 * pairs }
        let nodes = MerkleFrontier.nodes(size: size)
        let stored = try await LogTree(client: client, logger: logger).nodes(nodes)
        let frontier = try MerkleFrontier(size: size, hashes: nodes.compactMap { stored[$0] })
        for try await root in try await connection.queryUnlessClosed(
            "SELECT root_hash FROM ledger_checkpoints WHERE tree_size = \(size)", logger: logger
        ).decode(ByteBuffer.self) where Array(buffer: root) != frontier.root {
            throw CheckpointError("the stored tree of size \(size) does not give the root of its checkpoint; not signing")
        }
        return frontier
    }

    private func headPosition(_ connection: PostgresConnection) async throws -> Int64 {
        for try await position in try await connection.queryUnlessClosed("SELECT position FROM ledger_head", logger: logger)
            .decode(Int64.self)
        { return position }
        throw CheckpointError("ledger_head row missing: run migrations")
    }

    /// Adds the events after the frontier through `through` to the tree, a batch at a time, in
    /// a pipeline: while one batch's nodes are stored (one statement, on the lease's
    /// connection), the next batch is folded and the one after it read (on a pooled
    /// connection: reads need no lease).
    private func integrate(_ connection: PostgresConnection, _ frontier: inout MerkleFrontier, through: Int64) async throws {
        let (tree, batchSize, logger) = (LogTree(client: client, logger: logger), batchSize, logger)
        func read(after: Int64) -> Task<[MerkleTree.Hash], any Error> {
            Task { try await tree.leafHashesFromEvents(after: after, through: min(through, after + batchSize)) }
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
            var levels: [Int16] = [], indexes: [Int64] = [], hashes: [ByteBuffer] = []
            for leaf in leaves {
                // Level 0 (the leaf hashes) is not stored: see ledger_tree_nodes.
                for (node, hash) in frontier.append(leafHash: leaf) where node.level > 0 {
                    levels.append(Int16(node.level))
                    indexes.append(node.index)
                    hashes.append(ByteBuffer(bytes: hash))
                }
            }
            try await storing?.value
            if end < through { logger.info("building the log's tree", metadata: ["events": "\(end)", "of": "\(through)"]) }
            let (l, i, h) = (levels, indexes, hashes)
            storing = Task {
                try await connection.queryUnlessClosed(
                    "INSERT INTO ledger_tree_nodes (level, index, hash) SELECT * FROM unnest(\(l), \(i), \(h))", logger: logger)
            }
        }
        try await storing?.value
    }

    /// Signs the frontier's tree unless a checkpoint of that size exists; true if it signed.
    /// Without witnesses it is published in the same statement.
    private func sign(_ connection: PostgresConnection, _ frontier: MerkleFrontier) async throws -> Bool {
        let root = frontier.root
        let note = try signer.sign(Checkpoint(origin: signer.name, size: frontier.size, rootHash: root).text)
        let rows = try await connection.queryUnlessClosed(
            """
            WITH signed AS (
                INSERT INTO ledger_checkpoints (tree_size, root_hash, note)
                VALUES (\(frontier.size), \(ByteBuffer(bytes: root)), \(note)) ON CONFLICT (tree_size) DO NOTHING
                RETURNING tree_size, note),
            published AS (
                INSERT INTO ledger_published_checkpoints (tree_size, note) SELECT tree_size, note FROM signed WHERE \(witnesses == nil)
                RETURNING tree_size)
            SELECT tree_size FROM signed
            """, logger: logger)
        for try await _ in rows.decode(Int64.self) { return true }
        return false
    }

    /// With witnesses: the latest signed checkpoint, if newer than the latest published, sent to
    /// them; published with their cosignatures once they meet the quorum. A round that does not
    /// leaves it unpublished (served nowhere) and is tried again within a second, or with the
    /// next, larger checkpoint.
    private func publish(_ connection: PostgresConnection) async throws {
        guard let witnesses else { return }
        var pending: (size: Int64, note: String)?
        for try await (size, note) in try await connection.queryUnlessClosed(
            """
            SELECT c.tree_size, c.note FROM ledger_checkpoints c
            WHERE c.tree_size > (SELECT coalesce(max(tree_size), -1) FROM ledger_published_checkpoints)
            ORDER BY c.tree_size DESC LIMIT 1
            """, logger: logger
        ).decode((Int64, String).self) { pending = (size, note) }
        guard let (size, note) = pending else { return }
        let (text, _) = try SignedNote.parse(note)
        let lines = await witnesses.cosignatures(of: note, checkpoint: try Checkpoint(text: text), text: text)
        guard witnesses.policy.isMet(by: Set(lines.keys)) else {
            logger.warning(
                "checkpoint not published: the witnesses' quorum did not cosign it",
                metadata: ["size": "\(size)", "cosigned by": "\(lines.keys.sorted())"])
            return
        }
        let published = note + lines.keys.sorted().map { lines[$0]! }.joined()
        try await connection.queryUnlessClosed(
            "INSERT INTO ledger_published_checkpoints (tree_size, note) VALUES (\(size), \(published)) ON CONFLICT DO NOTHING",
            logger: logger)
        Gauge(label: "ledger_checkpoint_published_size").record(size)
    }
}

public struct CheckpointError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
