import Foundation
import LedgerClient
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The checkpointer publishing through witnesses (C2SP `tlog-witness`, `tlog-policy`), each a
/// real witness over HTTP on loopback: a quorum met, a witness down (the old checkpoint stays
/// the published one), a restarted checkpointer resynchronised by a 409, and a fork attempt by a
/// superuser (issue 37) that is never signed, sent to a witness or shown to a reader.
@Suite("Cosigning")
struct CosigningTests {
    static func append(_ server: LiveServer, _ count: Int) async throws -> Int64 {
        let store = EventStore(client: server.db, logger: Logger(label: "cosigning-test"))
        return try await store.append(
            .init(streamId: "w-\(UUID())", expectedVersion: .noStream, events: (0..<count).map { event("W", $0) })
        )
        .lastPosition
    }

    /// `ledger_witness_refusals_total` with this status, summed over witnesses, from /metrics.
    static func refusals(_ server: LiveServer, status: String) async throws -> Double {
        let metrics = String(decoding: try await TestHTTP.data(from: server.baseURL.appendingPathComponent("metrics")).0, as: UTF8.self)
        return metrics.split(separator: "\n").filter {
            $0.hasPrefix("ledger_witness_refusals_total") && $0.contains("status=\"\(status)\"")
        }
        .compactMap { Double($0.split(separator: " ").last!) }.reduce(0, +)
    }

    /// Two witnesses W1 and W2 of `signer`'s log, started, and a policy whose quorum is both of
    /// them (`group` "all") or either (`group` "any").
    static func twoWitnesses(for signer: NoteSigner, group: String) async throws -> (TestWitness, TestWitness, WitnessPolicy) {
        let (w1, w2) = (try TestWitness("w1.test", log: signer.verifier), try TestWitness("w2.test", log: signer.verifier))
        try await w1.start()
        try await w2.start()
        let policy = try WitnessPolicy(
            "log \(signer.verifier.text)\n\(w1.policyLine("W1"))\n\(w2.policyLine("W2"))\ngroup pair \(group) W1 W2\nquorum pair\n")
        return (w1, w2, policy)
    }

    static func published(_ server: LiveServer, _ policy: WitnessPolicy) async throws -> (checkpoint: Checkpoint, cosigners: [String]) {
        let note = try await server.client("anyone").publishedCheckpoint(key: server.signer.verifier).note
        return try policy.verify(note)
    }

    @Test("two witnesses: published once both cosign; one down, the old one stays served; back, it resumes")
    func quorum() async throws {
        let signer = try NoteSigner(name: "cosign.test/ledger")
        let (w1, w2, policy) = try await Self.twoWitnesses(for: signer, group: "all")
        try await LiveServer.run(signer: signer, witnesses: policy) { server in
            let first = try await Self.append(server, 30)
            try await waitUntil(timeout: .seconds(90), "a cosigned checkpoint of \(first)") {
                (try? await Self.published(server, policy).checkpoint.size) ?? 0 >= first
            }
            let cosigned = try await Self.published(server, policy)
            #expect(Set(cosigned.cosigners) == ["W1", "W2"])
            let v1 = try await server.client("anyone").checkpoint()
            #expect(try policy.verify(v1).cosigners.count == 2, "/v1/log/checkpoint serves the cosigned note")
            let evidence = try await server.client("auditor", roles: ["auditor"]).evidence(position: first)
            #expect(try policy.verify(evidence.checkpoint).checkpoint.size >= first, "evidence carries a cosigned checkpoint")

            await w2.stop()
            let second = try await Self.append(server, 10)
            try await waitUntil(timeout: .seconds(90), "W1 cosigns \(second) (W2 is down)") { try await w1.size(signer.name) == second }
            let stillPublished = try await Self.published(server, policy).checkpoint
            #expect(stillPublished.size < second && stillPublished.size >= first)
            #expect(try Checkpoint.open(try await server.client("anyone").checkpoint(), verifier: signer.verifier).size < second)
            let unpublished = await rejection { _ = try await server.client("auditor", roles: ["auditor"]).evidence(position: second) }
            #expect(unpublished?.code == "not_checkpointed", "no evidence against an unpublished checkpoint")

            try await w2.start()
            try await waitUntil(timeout: .seconds(90), "publishing resumes") {
                (try? await Self.published(server, policy).checkpoint.size) ?? 0 >= second
            }
            #expect(Set(try await Self.published(server, policy).cosigners) == ["W1", "W2"])
        }
        await w1.stop()
        await w2.stop()
    }

    @Test("a checkpointer that does not know a witness's size learns it from the 409 and sends again from there")
    func resynchronisation() async throws {
        let signer = try NoteSigner(name: "resync.test/ledger")
        let w1 = try TestWitness("w1.test", log: signer.verifier)
        try await w1.start()
        let policy = try WitnessPolicy("log \(signer.verifier.text)\n\(w1.policyLine("W1"))\nquorum W1\n")
        try await LiveServer.run(signer: signer, witnesses: policy) { server in
            let head = try await Self.append(server, 25)
            try await waitUntil(timeout: .seconds(90), "cosigned \(head)") { try await w1.size(signer.name) == head }
            let more = try await Self.append(server, 5)
            let tree = LogTree(client: server.db, logger: Logger(label: "resync"))
            // The latest signed checkpoint, past `more` (the witness may not have it yet).
            @Sendable func latestSigned() async throws -> (Int64, String) {
                for try await row in try await server.db.query(
                    "SELECT tree_size, note FROM ledger_checkpoints ORDER BY tree_size DESC LIMIT 1"
                )
                .decode((Int64, String).self) { return row }
                return (0, "")
            }
            try await waitUntil(timeout: .seconds(90), "a signed checkpoint of \(more)") { try await latestSigned().0 >= more }
            let latest = try await latestSigned()
            let fresh = WitnessClient(policy: policy, tree: tree, logger: Logger(label: "resync"))
            let text = try SignedNote.parse(latest.1).text
            let round = await fresh.cosignatures(of: latest.1, checkpoint: try Checkpoint(text: text), text: text)
            #expect(round.contradictions.isEmpty)
            let line = try #require(round.lines["W1"], "the witness cosigned after the 409")
            #expect(try w1.cosigner.verifier.time(of: text, in: SignedNote.parse(text + "\n" + line).signatures) != nil)
            let recorded = try await w1.size(signer.name)
            #expect(recorded == latest.0)
        }
        await w1.stop()
    }

    /// The notes of every published checkpoint, as the database holds them now.
    static func publishedNotes(_ server: LiveServer) async throws -> Set<String> {
        var notes: Set<String> = []
        for try await note in try await server.db.query("SELECT note FROM ledger_published_checkpoints").decode(String.self) {
            notes.insert(note)
        }
        return notes
    }

    /// Watches for two seconds: /tlog/checkpoint serves one of `allowed` (or none), and nothing
    /// past `signed` is signed.
    static func expectNothingNew(_ server: LiveServer, served allowed: Set<String>, signed: Int64) async throws {
        let watchUntil = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < watchUntil {
            // One published before the cut, or none (the database lost every one past the cut).
            let served = try await ForkRefusalTests.served(server)
            #expect(served.map { allowed.contains($0) } ?? true, "/tlog/checkpoint serves a checkpoint published before the cut")
            #expect(try await ForkRefusalTests.maxSigned(server) <= signed, "nothing past \(signed) is signed")
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Issue 37 with witnesses: the file deleted, the log cut below a cosigned checkpoint and
    /// written to. The database's record refuses it; with that record gone too, the witnesses'
    /// sizes do; and a restarted checkpointer learns those sizes before it signs.
    /// Nothing contradicting the cosigned checkpoint is signed, sent or served.
    @Test("the file deleted, the log cut below a cosigned checkpoint: refused by record, then witnesses' sizes")
    func forkAttempt() async throws {
        let signer = try NoteSigner(name: "fork.test/ledger")
        let (w1, w2, policy) = try await Self.twoWitnesses(for: signer, group: "any")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-cosign-fork-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("published-checkpoint")
        try await LiveServer.run(signer: signer, witnesses: policy, publishedFile: file) { server in
            let cosigned = try await Self.append(server, 40)
            try await waitUntil(timeout: .seconds(90), "cosigned \(cosigned)") {
                (try? await Self.published(server, policy).checkpoint.size) ?? 0 >= cosigned
            }
            let before = try await Self.published(server, policy)
            #expect(before.checkpoint.size == 40 && Set(before.cosigners) == ["W1", "W2"])
            let servedBefore = try #require(try await ForkRefusalTests.served(server))
            let notesBefore = try await Self.publishedNotes(server)
            #expect(notesBefore.contains(servedBefore))

            // The file gone, the log cut below the cosigned 40 (the database keeps its records),
            // then written to: the database's record refuses it.
            try FileManager.default.removeItem(at: file)
            let first = try await ForkRefusalTests.refusals(server)
            try await truncateLog(server.db, to: 30, keepingCheckpoints: true)
            try await waitUntil(timeout: .seconds(90), "a refusal: 30 events, fewer than the cosigned 40") {
                try await ForkRefusalTests.refusals(server) > first
            }
            try await ForkRefusalTests.appendRefused(server, "g", 15)
            try await Self.expectNothingNew(server, served: [servedBefore], signed: 40)

            // The database's records past 30 gone too: only the witnesses know of 40. A log of 30
            // lacks their 40; one written past it cannot be checked against a root no record here has.
            let second = try await ForkRefusalTests.refusals(server)
            try await truncateLog(server.db, to: 30, keepingCheckpoints: false)
            try await waitUntil(timeout: .seconds(90), "a refusal: 30 events, fewer than the witnesses' 40") {
                try await ForkRefusalTests.refusals(server) > second
            }
            try await ForkRefusalTests.appendRefused(server, "h", 15)
            try await Self.expectNothingNew(server, served: notesBefore, signed: 30)
            let sizes = [try await w1.size(signer.name), try await w2.size(signer.name)]
            #expect(sizes == [40, 40], "no witness was sent the fork")
            #expect(!FileManager.default.fileExists(atPath: file.path), "nothing was signed, so the file was not written again")

            // A checkpointer that knows nothing (a restart) asks the witnesses before it signs.
            let fresh = WitnessClient(
                policy: policy, tree: LogTree(client: server.db, logger: Logger(label: "fork")), logger: Logger(label: "fork"))
            #expect(fresh.heldSizes().isEmpty)
            let empty = try signer.sign(Checkpoint(origin: signer.name, size: 0, rootHash: MerkleTree.emptyRoot).text)
            await fresh.learnSizes(probe: empty)
            #expect(fresh.heldSizes() == ["W1": 40, "W2": 40])
        }
        await w1.stop()
        await w2.stop()
    }
}
