import Foundation
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing
import TransparencyLog

/// The verifiable log on a real PostgreSQL: the tree the checkpointer grows, proofs read back
/// and checked by the auditor's verifier, the attacks a checkpoint catches, least privilege.
@Suite("Verifiable log")
struct VerifiableLogTests {
    static let logger = Logger(label: "test-checkpointer")

    /// Runs a checkpointer (and its LISTEN hub) while `body` runs.
    static func withCheckpointer<T: Sendable>(
        _ client: PostgresClient, signer: NoteSigner, batchSize: Int64 = 50_000, _ body: @Sendable () async throws -> T
    ) async throws -> T {
        let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
        let checkpointer = Checkpointer(
            client: client, signer: signer, events: events, logger: logger, interval: .milliseconds(20), batchSize: batchSize)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await events.run() }
            group.addTask { try await checkpointer.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// Waits until the latest checkpoint covers the head; returns it, its signature checked.
    static func checkpointAtHead(_ client: PostgresClient, _ store: EventStore, _ verifier: NoteVerifier) async throws
        -> Checkpoint
    {
        let tree = LogTree(client: client, logger: logger)
        let head = try await store.head().position
        // Generous: the whole suite runs at once, and the tests that wait here took 110–175 s there.
        try await waitUntil(timeout: .seconds(120), "a checkpoint of size \(head)") {
            try await tree.latestCheckpoint()?.size == head
        }
        return try Checkpoint.open(try #require(try await tree.latestCheckpoint()).note, verifier: verifier)
    }

    static func append(_ store: EventStore, count: Int, stream: String = "s") async throws {
        var left = count
        while left > 0 {
            // Both append paths: small groups hash in PL/pgSQL, large ones in Swift.
            let n = min(left, [1, 3, 250][left % 3])
            _ = try await store.append(
                .init(
                    streamId: "\(stream)\(left % 5)", expectedVersion: .any,
                    events: (0..<n).map { NewEvent(type: "Tested", data: #"{"n":\#(left - $0),"text":"é ☃"}"#) }))
            left -= n
        }
    }

    @Test("the database's leaf bytes are EventLeaf's, for events from both append paths")
    func leavesMatch() async throws {
        try await withTestStore { store, client, _ in
            try await Self.append(store, count: 600)
            let rows = try await client.query(
                """
                SELECT position, ledger_leaf(position, stream_id, version, event_id, event_type, data::text, metadata::text, recorded_at)
                FROM ledger_events ORDER BY position
                """)
            var sql: [[UInt8]] = []
            for try await (_, leaf) in rows.decode((Int64, ByteBuffer).self) { sql.append(Array(buffer: leaf)) }
            let swift = try await store.readAll(after: 0, limit: 1_000).map(EventLeaf.bytes)
            #expect(sql.count == 600 && sql == swift)
        }
    }

    @Test("proofs read from the store verify against signed checkpoints, for many sizes")
    func proofsFromTheStore() async throws {
        try await withTestStore { store, client, _ in
            let signer = try NoteSigner(name: "test.example/ledger")
            let tree = LogTree(client: client, logger: Self.logger)
            let checkpoints = try await Self.withCheckpointer(client, signer: signer) {
                var checkpoints: [Checkpoint] = []
                for round in 0..<6 {
                    try await Self.append(store, count: [1, 7, 64, 300, 1_000, 1_500][round], stream: "r\(round)-")
                    checkpoints.append(try await Self.checkpointAtHead(client, store, signer.verifier))
                }
                return checkpoints
            }
            let leaves = try await store.readAll(after: 0, limit: 5_000).map { MerkleTree.leafHash(EventLeaf.bytes($0)) }
            #expect(checkpoints.last?.size == Int64(leaves.count))
            for checkpoint in checkpoints {
                #expect(checkpoint.rootHash == MerkleTree.root(leafHashes: leaves[0..<Int(checkpoint.size)]))
                for position in Set((0..<40).map { _ in Int64.random(in: 1...checkpoint.size) } + [1, checkpoint.size]) {
                    let (leafHash, path) = try await tree.inclusionProof(position: position, size: checkpoint.size)
                    #expect(leafHash == leaves[Int(position) - 1])
                    try MerkleProof.verifyInclusion(
                        leafIndex: position - 1, treeSize: checkpoint.size, leafHash: leafHash, proof: path, root: checkpoint.rootHash)
                }
                // Many proofs read at once (a lookup's): each the one read alone, in the order asked, repeats kept.
                let asked = (0..<60).map { _ in Int64.random(in: 1...checkpoint.size) } + [checkpoint.size, 1, checkpoint.size]
                let batched = try await tree.inclusionProofs(positions: asked, size: checkpoint.size)
                #expect(batched.count == asked.count)
                for (position, proof) in zip(asked, batched) {
                    let alone = try await tree.inclusionProof(position: position, size: checkpoint.size)
                    #expect(proof.leafHash == alone.leafHash && proof.hashes == alone.hashes, "\(position) of \(checkpoint.size)")
                    #expect(proof.leafHash == leaves[Int(position) - 1])
                }
            }
            #expect(try await tree.inclusionProofs(positions: [], size: checkpoints[0].size).isEmpty)
            for (old, new) in zip(checkpoints, checkpoints.dropFirst()) + [
                (checkpoints[0], checkpoints[5]), (checkpoints[2], checkpoints[4]),
            ] {
                let proof = try await tree.consistencyProof(from: old.size, to: new.size)
                try MerkleProof.verifyConsistency(size1: old.size, size2: new.size, root1: old.rootHash, root2: new.rootHash, proof: proof)
            }
            // Every kept checkpoint is one per size, each signed by the key.
            let kept = try await client.query("SELECT note FROM ledger_checkpoints ORDER BY tree_size")
            for try await note in kept.decode(String.self) { _ = try Checkpoint.open(note, verifier: signer.verifier) }
        }
    }

    @Test("an existing log is brought into the tree in batches, then signed")
    func backfill() async throws {
        try await withTestStore { store, client, _ in
            try await Self.append(store, count: 1_000)
            let signer = try NoteSigner(name: "test.example/ledger")
            let checkpoint = try await Self.withCheckpointer(client, signer: signer, batchSize: 128) {
                try await Self.checkpointAtHead(client, store, signer.verifier)
            }
            let leaves = try await store.readAll(after: 0, limit: 2_000).map { MerkleTree.leafHash(EventLeaf.bytes($0)) }
            #expect(checkpoint.size == 1_000 && checkpoint.rootHash == MerkleTree.root(leafHashes: leaves[...]))
            // Batches are integrated without signing; the caught-up tree is signed once.
            let rows = try await client.query("SELECT count(*) FROM ledger_checkpoints WHERE tree_size > 0")
            for try await n in rows.decode(Int64.self) { #expect(n == 1) }
        }
    }

    @Test("two checkpointers: one signs, the other waits")
    func oneSigner() async throws {
        try await withTestStore { store, client, _ in
            let (a, b) = (try NoteSigner(name: "test.example/ledger"), try NoteSigner(name: "test.example/ledger"))
            try await Self.withCheckpointer(client, signer: a) {
                try await Self.withCheckpointer(client, signer: b) {
                    for _ in 0..<5 {
                        try await Self.append(store, count: 50)
                        _ = try await waitUntil(timeout: .seconds(120), "a checkpoint") {
                            try await LogTree(client: client, logger: Self.logger).latestCheckpoint()?.size == store.head().position
                        }
                    }
                }
            }
            var signers: Set<String> = []
            for try await note in try await client.query("SELECT note FROM ledger_checkpoints").decode(String.self) {
                if (try? SignedNote.open(note, verifier: a.verifier)) != nil { signers.insert("a") }
                if (try? SignedNote.open(note, verifier: b.verifier)) != nil { signers.insert("b") }
            }
            #expect(signers.count == 1)
        }
    }

    @Test("log verify --checkpoint catches a truncation and a rewrite with a recomputed chain")
    func attacksAreCaught() async throws {
        try await withTestStore { store, client, _ in
            let signer = try NoteSigner(name: "test.example/ledger")
            try await Self.append(store, count: 40)
            let saved = try await Self.withCheckpointer(client, signer: signer) {
                try await Self.checkpointAtHead(client, store, signer.verifier)
            }
            let verification = LogVerification(store: store, tree: LogTree(client: client, logger: Self.logger), batchSize: 7)
            let intact = try await verification.run(saved: saved)
            #expect(intact.failure == nil && intact.checkpointFailure == nil && intact.root == saved.rootHash)

            // The rewrite: event 17 changed, every chain hash after it recomputed, the head moved.
            try await client.query("ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_update")
            try await client.query(#"UPDATE ledger_events SET data = '{"n":0,"text":"rewritten"}' WHERE position = 17"#)
            var previous = try #require(try await store.readAll(after: 15, limit: 1).first).hash
            for event in try await store.readAll(after: 16, limit: 100) {
                previous = HashChain.hash(previous: previous, event: event)
                try await client.query("UPDATE ledger_events SET hash = \(ByteBuffer(bytes: previous)) WHERE position = \(event.position)")
            }
            try await client.query("UPDATE ledger_head SET hash = \(ByteBuffer(bytes: previous))")
            let chainOnly = try await LogVerification(store: store).run()
            #expect(chainOnly.failure == nil, "the recomputed chain fools the chain alone")
            let rewritten = try await verification.run(saved: saved)
            #expect(rewritten.failure == nil)
            #expect(rewritten.checkpointFailure == .rewritten(checkpointSize: 40, firstDifferent: 17))

            // The truncation: the last 10 events dropped and the head moved back.
            try await client.query("ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_delete")
            try await client.query("DELETE FROM ledger_events WHERE position > 30")
            let last = try #require(try await store.readAll(after: 29, limit: 1).first)
            try await client.query("UPDATE ledger_head SET position = 30, hash = \(ByteBuffer(bytes: last.hash))")
            let truncated = try await verification.run(saved: saved)
            #expect(truncated.failure == nil)
            #expect(truncated.checkpointFailure == .truncated(logSize: 30, checkpointSize: 40))
        }
    }

    @Test("the serving role reads and appends but cannot change the log, its tree or its checkpoints")
    func leastPrivilege() async throws {
        try await withTestStore { store, client, settings in
            let signer = try NoteSigner(name: "test.example/ledger")
            try await Self.append(store, count: 5)
            _ = try await Self.withCheckpointer(client, signer: signer) { try await Self.checkpointAtHead(client, store, signer.verifier) }
            let service = try await PostgresAdmin.serviceLogin(
                "ledger_app_\(UInt32.random(in: 0 ... .max))", on: settings, logger: Self.logger)
            try await withClient(service) { app in
                let appStore = EventStore(client: app, logger: Self.logger)
                // Appends (both paths) and the checkpointer work as the service role.
                try await Self.append(appStore, count: 260, stream: "app")
                let checkpoint = try await Self.withCheckpointer(app, signer: signer) {
                    try await Self.checkpointAtHead(app, appStore, signer.verifier)
                }
                #expect(checkpoint.size == 265)
                for statement: PostgresQuery in [
                    "UPDATE ledger_events SET event_type = 'X'", "DELETE FROM ledger_events", "TRUNCATE ledger_events",
                    "ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_update",
                    "INSERT INTO ledger_events SELECT position + 1000, stream_id, version + 1000, gen_random_uuid(), event_type, data, metadata, recorded_at, hash FROM ledger_events LIMIT 1",
                    "UPDATE ledger_head SET position = 1", "UPDATE ledger_tree_nodes SET hash = hash",
                    "DELETE FROM ledger_checkpoints", "TRUNCATE ledger_checkpoints", "ALTER TABLE ledger_checkpoints DISABLE TRIGGER ALL",
                    "DROP TABLE ledger_tree_nodes",
                ] {
                    // insufficient_privilege: refused for want of a right, not for a bad statement.
                    let error = await #expect(throws: PSQLError.self, "\(statement.sql)") { try await app.query(statement) }
                    #expect(error?.serverInfo?[.sqlState] == "42501", "\(statement.sql): \(String(reflecting: error))")
                }
            }
            #expect(try await store.head().position == 265)
            #expect(try await LogVerification(store: store).run().failure == nil)
        }
    }
}
