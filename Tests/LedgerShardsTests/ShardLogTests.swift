import Foundation
import LedgerApp
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerShards
import LedgerTestSupport
import PostgresNIO
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Each shard is a log of its own (issue 49): its origin (the deployment's with `/shard/k`), its
/// checkpoints signed with the deployment's key under that name, its tiles at `/tlog/shard/{k}/`,
/// checked by Go's `sumdb/tlog` and `note`, a verifier no one here wrote.
@Suite("Shards' own logs")
struct ShardLogTests {
    /// Each shard's checkpoint at /tlog/shard/{k}/ covers its events and opens with its own key
    /// alone; Go's sumdb/tlog verifies each shard's tiles; other shard paths 404.
    @Test("each shard's checkpoint at /tlog/shard/{k}/ covers its events under its own key; Go checks its tiles")
    func shardLogs() async throws {
        let signer = try NoteSigner(name: "shards.test/ledger")
        let keys = try RoleServices.ShardLogs(signer: signer, count: 2).shards.map(\.verifier)
        #expect(keys.map(\.name) == ["shards.test/ledger/shard/0", "shards.test/ledger/shard/1"])
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        try await LiveShards.run(shards: shards, configuration: .testing { $0.publicEntries = true }, signer: signer) { live in
            let devin = live.client("devin")
            for n in 0..<40 {
                let id = try await devin.prepareCollaboration(
                    localIdentifier: "log \(n)", title: "Log \(n)", initiator: Initiator(handle: "devin@example.com")
                ).identifier
                _ = try await devin.updateParticipants(added: [SimulatedPerson(collaborationId: id, devices: 1).rootHashData], in: id)
            }
            for index in 0..<2 {
                let events = try await live.events(on: index)
                #expect(events > 0)
                let url = URL(string: live.baseURL.absoluteString + "/tlog/shard/\(index)/checkpoint")!
                try await waitUntil(timeout: .seconds(30), "shard \(index)'s checkpoint covering its \(events) events") {
                    let (body, response) = try await TestHTTP.data(from: url)
                    let text = String(decoding: body, as: UTF8.self)
                    return response.statusCode == 200 && (try? Checkpoint.open(text, verifier: keys[index]).size) == events
                }
                let text = String(decoding: try await TestHTTP.data(from: url).0, as: UTF8.self)
                #expect(throws: (any Error).self, "shard \(index)'s checkpoint opened with the other's key") {
                    try Checkpoint.open(text, verifier: keys[1 - index])
                }
                #expect(throws: (any Error).self) { try Checkpoint.open(text, verifier: signer.verifier) }
                let output = try await GoTilecheck.run(root: live.baseURL.absoluteString + "/tlog/shard/\(index)", key: keys[index].text)
                #expect(output.status == 0, "\(output.output)")
                #expect(output.output.contains("OK size \(events)"), "\(output.output)")
            }
            for (path, status) in [("tlog/shard/2/checkpoint", 404), ("tlog/shard/01/checkpoint", 404), ("tlog/checkpoint", 200)] {
                let (_, response) = try await TestHTTP.data(from: live.baseURL.appendingPathComponent(path))
                #expect(response.statusCode == status, "/\(path)")
            }
        }
    }
}

/// The top log (issue 49): the shards' checkpoints recorded in order as its entries, checkpointed
/// as the deployment's origin and served at `/tlog/`, checked by Go's `sumdb/tlog`; a shard tree
/// that does not extend what was recorded is never recorded.
@Suite("The top log")
struct TopLogTests {
    static func recorded(_ live: LiveShards) async throws -> [TopLogRecorder.Recorded] {
        try await withClient(live.top) { client in
            var recorded: [TopLogRecorder.Recorded] = []
            let rows = try await client.query(
                "SELECT data::text FROM ledger_events WHERE event_type = \(TopLogRecorder.eventType) ORDER BY position")
            for try await data in rows.decode(String.self) {
                recorded.append(try CanonicalJSON.decode(TopLogRecorder.Recorded.self, from: data))
            }
            return recorded
        }
    }

    /// Each shard's checkpoints are recorded in order, each opening with its shard's key; the top
    /// checkpoint at /tlog/ covers them, opens with the deployment's key and is cosigned by its
    /// witness; Go's sumdb/tlog verifies the top tiles; ledger log verify --url --shards checks
    /// both levels, and refuses another key and a rewritten shard; a shard tree that does not
    /// extend the recorded one is not recorded.
    @Test("the top log records each shard's checkpoints, is cosigned, and Go and ledger log verify check it")
    func topLog() async throws {
        let signer = try NoteSigner(name: "top.test/ledger")
        let keys = try RoleServices.ShardLogs(signer: signer, count: 2).shards.map(\.verifier)
        let witness = try TestWitness("w1.test", log: signer.verifier)
        try await witness.start()
        let policy = try WitnessPolicy("log \(signer.verifier.text)\n\(witness.policyLine("W1"))\nquorum W1\n")
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        do {
            try await LiveShards.run(shards: shards, signer: signer, witnesses: policy) { live in
                let devin = live.client("devin")
                var ids: [String] = []
                for n in 0..<30 {
                    ids.append(
                        try await devin.prepareCollaboration(
                            localIdentifier: "top \(n)", title: "Top \(n)", initiator: Initiator(handle: "devin@example.com")
                        ).identifier)
                }
                let events = [try await live.events(on: 0), try await live.events(on: 1)]
                try await waitUntil(timeout: .seconds(30), "each shard's checkpoint of all its events recorded") {
                    let recorded = try await Self.recorded(live)
                    return (0..<2).allSatisfy { shard in recorded.contains { $0.shard == shard && $0.size == events[shard] } }
                }
                let recorded = try await Self.recorded(live)
                for shard in 0..<2 {
                    let mine = recorded.filter { $0.shard == shard }
                    #expect(zip(mine, mine.dropFirst()).allSatisfy { $0.size < $1.size }, "shard \(shard) recorded in order")
                    for entry in mine {
                        let opened = try Checkpoint.open(entry.checkpoint, verifier: keys[shard])
                        #expect(opened.size == entry.size && Base64.encode(opened.rootHash) == entry.rootHash)
                        #expect(entry.origin == keys[shard].name)
                    }
                }
                // The top checkpoint: the deployment's origin, over every recorded entry.
                let url = URL(string: live.baseURL.absoluteString + "/tlog/checkpoint")!
                let entries = Int64(recorded.count)
                try await waitUntil(timeout: .seconds(30), "the top checkpoint covering \(entries) entries") {
                    let (body, response) = try await TestHTTP.data(from: url)
                    let size = try? Checkpoint.open(String(decoding: body, as: UTF8.self), verifier: signer.verifier).size
                    return response.statusCode == 200 && (size ?? 0) >= entries
                }
                let note = String(decoding: try await TestHTTP.data(from: url).0, as: UTF8.self)
                #expect(try policy.verify(note).cosigners == ["W1"], "the top checkpoint is cosigned by the policy's witness")
                let output = try await GoTilecheck.run(root: live.baseURL.absoluteString + "/tlog", key: signer.verifier.text)
                #expect(output.status == 0 && output.output.contains("OK size"), "\(output.output)")
                try await Self.logVerify(live, note: note, signer: signer)

                // A recorded root that the shard's tree does not extend: shard 0 is recorded no more,
                // shard 1 still is.
                let forged = TopLogRecorder.Recorded(
                    shard: 0, origin: keys[0].name, size: events[0], rootHash: Base64.encode([UInt8](repeating: 7, count: 32)),
                    checkpoint: "")
                try await withClient(live.top) { client in
                    try await client.query(
                        "UPDATE ledger_streams SET state = \(CanonicalJSON.encode(forged))::json WHERE stream_id = \(TopLogRecorder.stream(0))"
                    )
                }
                for id in ids { _ = try await devin.postHighlight(.change, trigger: "edit", in: id) }
                let grown = [try await live.events(on: 0), try await live.events(on: 1)]
                #expect(grown[0] > events[0] && grown[1] > events[1], "both shards grew")
                try await waitUntil(timeout: .seconds(30), "shard 1's grown tree recorded") {
                    try await Self.recorded(live).contains { $0.shard == 1 && $0.size == grown[1] }
                }
                #expect(
                    try await Self.recorded(live).filter { $0.shard == 0 }.map(\.size).max() == events[0],
                    "shard 0 recorded past the forged root")
            }
        } catch {
            await witness.stop()
            throw error
        }
        await witness.stop()
    }

    /// `ledger log verify --url --shards` from tiles alone, with the deployment's key: the top log,
    /// then each shard's log against the checkpoints the top log recorded of it. Refused: another
    /// deployment's key, and a shard whose stored tree was rewritten (its tiles no longer give the
    /// root the top log recorded).
    static func logVerify(_ live: LiveShards, note: String, signer: NoteSigner) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("top-\(UUID().uuidString.prefix(8)).checkpoint")
        try note.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        func verify(key: String) async throws -> ProcessRunner.Output {
            try await ProcessRunner.run(
                ledgerBinary(),
                ["log", "verify", "--url", live.baseURL.absoluteString, "--checkpoint", file.path, "--key", key, "--shards"])
        }
        let run = try await verify(key: signer.verifier.text)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("shard 0: OK") && run.output.contains("shard 1: OK"), "\(run.output)")
        let other = try await verify(key: try NoteSigner(name: signer.name).verifier.text)
        #expect(other.status != 0, "another deployment's key: \(other.output)")
        // Shard 0's first event rewritten past its trigger (an owner's hand): its leaf, and so its tiles, change.
        try await withClient(live.shards[0]) { client in
            try await client.query("ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_update")
            try await client.query("UPDATE ledger_events SET event_type = 'Forged' WHERE position = 1")
            try await client.query("ALTER TABLE ledger_events ENABLE TRIGGER ledger_events_no_update")
        }
        let rewritten = try await verify(key: signer.verifier.text)
        #expect(rewritten.status != 0 && rewritten.output.contains("shard 0"), "\(rewritten.output)")
    }
}
