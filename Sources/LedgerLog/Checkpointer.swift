import Foundation
import LedgerPostgres
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import TransparencyLog

/// Grows the log's Merkle tree and signs a checkpoint whenever the log has grown. It
/// orchestrates: every statement is `LogStore`'s, the tree's arithmetic `MerkleIntegration`'s.
///
/// **One signer.** It works on one connection holding the lease (`LogStore.withLease`, a
/// session advisory lock): a second checkpointer waits until the first one's connection is
/// gone, so two never sign different trees of the same size. Every checkpoint is kept.
///
/// **From the events** (`Checkpointer+Integration`). Leaf hashes are computed by PostgreSQL
/// from the stored events, integrated into the frontier, and the nodes above the leaves that
/// they complete are stored, one statement a batch; the root it signs is the frontier's, never
/// a stored node's. On start the frontier is loaded from the stored nodes and must give the
/// root of the checkpoint of that size, and the log must hold at least as many events as the
/// tree. A log older than the tree (an upgrade) is integrated in batches, with progress in the
/// log, then signed once caught up.
///
/// **Replicated, and never below its floor** (SPEC "High availability", "Backups and recovery").
/// Each tree built waits, with the WAL position of its events, until every promotable standby has
/// flushed them (`ReplicationGate`); the largest such tree is signed, once it is proved to extend
/// every record of a checkpoint this log signed, sent or published (`CheckpointFloor`: the file,
/// the database, the witnesses' sizes). A tree that does not is a `ForkRefusal`: nothing is
/// signed, sent or published, and the checkpointer looks again after `ForkRefusal.retry`.
///
/// **Recorded before it leaves.** A checkpoint is written to the file and stored in the database
/// when it is signed, before any witness sees it; it is published (served) only once the
/// witnesses' quorum has cosigned it (`Checkpointer+Witnesses`), or at once without witnesses.
public struct Checkpointer: Service {
    let store: LogStore
    let signer: NoteSigner
    let events: NotificationHub
    let logger: Logger
    /// At most one checkpoint per interval while appends go on.
    let interval: Duration
    let batchSize: Int64
    /// With a witness policy, a checkpoint is published once its quorum has cosigned it.
    let witnesses: WitnessClient?
    /// The file keeping the latest signed checkpoint; nil: none (tests and benchmarks).
    let file: CheckpointFile?
    let floor: CheckpointFloor
    let gate: ReplicationGate
    /// The first differing position found while refused, by (edge size, log head).
    let scans = FirstDifferentScans()

    public init(
        client: PostgresClient, signer: NoteSigner, events: NotificationHub, logger: Logger,
        interval: Duration = .milliseconds(200), batchSize: Int64 = 50_000, witnesses: WitnessClient? = nil, publishedFile: URL? = nil
    ) {
        let store = LogStore(client: client, logger: logger)
        self.store = store
        self.signer = signer
        self.events = events
        self.logger = logger
        self.interval = interval
        self.batchSize = batchSize
        self.witnesses = witnesses
        let file = publishedFile.map { CheckpointFile(url: $0) }
        self.file = file
        self.floor = CheckpointFloor(file: file, tree: LogTree(store: store), origin: signer.name, logger: logger)
        self.gate = ReplicationGate(store: store)
    }

    /// A tree built and not signed yet: its size, root, and the WAL position covering its events.
    struct Built {
        var size: Int64
        var root: MerkleTree.Hash
        var wal: Int64
    }

    public func run() async throws {
        ForkRefusal.counter(signer.name).increment(by: 0)
        let wake = events.register()
        defer { wake.cancel() }
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await store.withLease { connection in
                        logger.info("checkpointer signing", metadata: ["key": "\(signer.verifier.text)"])
                        try await work(connection, wake: wake)
                    }
                } catch is ForkRefusal {
                    // Logged and counted where it was refused.
                    try? await Task.sleep(for: ForkRefusal.retry)
                    continue
                } catch {
                    if Task.isCancelled { break }
                    logger.warning(
                        "checkpointer: stopped; retrying", metadata: ["error": "\(DatabaseFailure.describe(error, reflecting: true))"])
                }
                // Not the lease holder, or the connection was lost: look again shortly.
                _ = await wake.wait(timeout: .seconds(1))
            }
        }
    }

    /// The lease holder's loop: the gate's head, the tree grown to it, the largest replicated
    /// tree checked against the floor and signed, the newest signed one sent to the witnesses.
    private func work(_ connection: PostgresConnection, wake: NotificationHub.Subscription) async throws {
        try await store.recordVerifierKey(signer.verifier.text, on: connection)
        var frontier = try await load(connection)
        // The witnesses' sizes are part of the floor: asked before the first signature, and
        // again every 10 s of a witness that has not answered.
        let empty = try signer.sign(Checkpoint(origin: signer.name, size: 0, rootHash: MerkleTree.emptyRoot).text)
        var cadence = CheckpointCadence(clock: ContinuousClock(), interval: interval)
        if let witnesses { await witnesses.learnSizes(probe: empty) }
        var signedSize: Int64 = -1
        var built: [Built] = []  // oldest first; at most `maxBuilt`
        var checked = false  // a tree of this run has been proved to extend the floor
        var held = 0  // rounds in a row with trees waiting for the standbys
        var sending: Sending?  // the checkpoint next sent to the witnesses, once its record is replicated
        while !Task.isCancelled {
            let head = try await gate.head(connection)
            // Every round, before the tree grows or a built tree is signed: the events it was
            // built from are still there (or it refuses).
            guard head.position >= frontier.size else {
                throw ForkRefusal.refuse(
                    "the log ends at position \(head.position) but its tree holds \(frontier.size) events: events \(head.position + 1)…\(frontier.size) were removed; not signing",
                    log: signer.name, logger: logger, metadata: ["tree": "\(frontier.size)"])
            }
            try await checkEdge(frontier)
            if head.position > frontier.size { try await integrate(connection, &frontier, through: head.position) }
            if frontier.size > (built.last?.size ?? signedSize) {
                built.append(Built(size: frontier.size, root: frontier.root, wal: head.wal))
                if built.count > Self.maxBuilt { built.removeFirst() }
            }
            if let tree = try await replicated(&built, connection), tree.size != signedSize {
                // Every tree, before it is signed: the floor may have risen (a witness's answer).
                if let witnesses, !witnesses.unknownSizes().isEmpty, cadence.probeDue() {
                    await witnesses.learnSizes(probe: empty)
                }
                try await floor.check(
                    size: tree.size, root: tree.root, witnessSizes: witnesses?.heldSizes() ?? [:], unknown: witnesses?.unknownSizes() ?? [])
                checked = true
                // Signed once per size (a size signed by an earlier run is not signed again either).
                if try await sign(connection, tree) {
                    cadence.didSign()
                    ShardMetrics.gauge("ledger_checkpoint_size", logger).record(tree.size)
                    ShardMetrics.gauge("ledger_checkpoint_signed_seconds", logger).record(Date().timeIntervalSince1970)
                }
                signedSize = tree.size
            }
            // Only what extends the floor is sent: the newest signed checkpoint is at most the checked tree.
            var sendHeld = false
            if witnesses != nil, checked { sendHeld = try await publish(connection, &sending) }
            held = built.isEmpty && !sendHeld ? 0 : held + 1
            if held == Self.holdLogged {
                logger.warning(
                    "checkpointer: waiting for the standbys to flush the log's newest events before signing",
                    metadata: ["tree": "\(frontier.size)", "signed": "\(signedSize)"])
            }
            if held > 0 {
                // A standby has yet to flush the newest events: look again soon, then less often.
                try await cadence.back(off: held)
            } else if try await gate.head(connection).position == frontier.size {
                // Wait for the next append, then let appends gather for the rest of the interval.
                _ = await wake.wait(timeout: .seconds(1))
            }
            try await cadence.untilNextRound()
        }
    }

    /// Trees kept while the standbys lag (the oldest dropped beyond it: a later one is signed).
    static let maxBuilt = 1_000
    /// Rounds of waiting for the standbys before it is logged (about 5 s).
    static let holdLogged = 12

    /// The largest built tree whose events every promotable standby has flushed, removed from
    /// `built` with the smaller ones; nil while none is.
    private func replicated(_ built: inout [Built], _ connection: PostgresConnection) async throws -> Built? {
        guard !built.isEmpty else { return nil }
        let flushed = try await gate.replicated(connection)
        guard let tree = built.last(where: { flushed == nil || $0.wal <= flushed! }) else { return nil }
        built.removeAll { $0.size <= tree.size }
        return tree
    }

    /// Signs the tree unless a checkpoint of its size exists; true if it signed. A checkpoint of
    /// that size with another root is a `ForkRefusal`. The note is written to the file, then
    /// stored, before anything sends it anywhere; without witnesses it is published in the same
    /// statement.
    private func sign(_ connection: PostgresConnection, _ tree: Built) async throws -> Bool {
        if let existing = try await store.signedRoot(size: tree.size, on: connection) {
            guard existing == tree.root else {
                throw ForkRefusal.refuse(
                    "a checkpoint of size \(tree.size) with another root is stored: the log's first \(tree.size) events changed",
                    log: signer.name, logger: logger, metadata: [:])
            }
            return false
        }
        let note = try signer.sign(Checkpoint(origin: signer.name, size: tree.size, rootHash: tree.root).text)
        try file?.write(note)
        return try await store.storeSigned(size: tree.size, root: tree.root, note: note, publishing: witnesses == nil, on: connection)
    }
}
