import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import LedgerAPI
import LedgerClient
import LedgerConfiguration
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerWitness
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing
import TransparencyLog

/// The checkpointer publishing through witnesses (C2SP `tlog-witness`, `tlog-policy`), each a
/// real witness over HTTP on loopback: a quorum met, a witness down (the old checkpoint stays
/// the published one), a restarted checkpointer resynchronised by a 409, and a fork attempt by a
/// superuser that no witness cosigns and no reader is ever shown.
@Suite("Cosigning")
struct CosigningTests {
    static func append(_ server: LiveServer, _ count: Int) async throws -> Int64 {
        let store = EventStore(client: server.db, logger: Logger(label: "cosigning-test"))
        return try await store.append(.init(streamId: "w-\(UUID())", expectedVersion: .noStream, events: (0 ..< count).map { event("W", $0) }))
            .lastPosition
    }

    /// `ledger_witness_refusals_total` with this status, summed over witnesses, from /metrics.
    static func refusals(_ server: LiveServer, status: String) async throws -> Double {
        let metrics = String(decoding: try await URLSession.shared.data(from: server.baseURL.appendingPathComponent("metrics")).0, as: UTF8.self)
        return metrics.split(separator: "\n").filter { $0.hasPrefix("ledger_witness_refusals_total") && $0.contains("status=\"\(status)\"") }
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

    @Test("two witnesses: published once both cosign; one down, the old checkpoint stays published and served; back, publishing resumes")
    func quorum() async throws {
        let signer = try NoteSigner(name: "cosign.test/ledger")
        let (w1, w2, policy) = try await Self.twoWitnesses(for: signer, group: "all")
        try await LiveServer.run(signer: signer, witnesses: policy) { server in
            let first = try await Self.append(server, 30)
            try await waitUntil(timeout: .seconds(30), "a cosigned checkpoint of \(first)") {
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
            try await waitUntil(timeout: .seconds(30), "W1 cosigns \(second) (W2 is down)") { try await w1.size(signer.name) == second }
            let stillPublished = try await Self.published(server, policy).checkpoint
            #expect(stillPublished.size < second && stillPublished.size >= first)
            #expect(try Checkpoint.open(try await server.client("anyone").checkpoint(), verifier: signer.verifier).size < second)
            let unpublished = await rejection { _ = try await server.client("auditor", roles: ["auditor"]).evidence(position: second) }
            #expect(unpublished?.code == "not_checkpointed", "no evidence against an unpublished checkpoint")

            try await w2.start()
            try await waitUntil(timeout: .seconds(30), "publishing resumes") {
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
            try await waitUntil(timeout: .seconds(30), "cosigned \(head)") { try await w1.size(signer.name) == head }
            let more = try await Self.append(server, 5)
            let tree = LogTree(client: server.db, logger: Logger(label: "resync"))
            // The latest signed checkpoint, past `more` (the witness may not have it yet).
            @Sendable func latestSigned() async throws -> (Int64, String) {
                for try await row in try await server.db.query("SELECT tree_size, note FROM ledger_checkpoints ORDER BY tree_size DESC LIMIT 1")
                    .decode((Int64, String).self) { return row }
                return (0, "")
            }
            try await waitUntil(timeout: .seconds(30), "a signed checkpoint of \(more)") { try await latestSigned().0 >= more }
            let latest = try await latestSigned()
            let fresh = WitnessClient(policy: policy, tree: tree, logger: Logger(label: "resync"))
            let text = try SignedNote.parse(latest.1).text
            let lines = await fresh.cosignatures(of: latest.1, checkpoint: try Checkpoint(text: text), text: text)
            let line = try #require(lines["W1"], "the witness cosigned after the 409")
            #expect(try w1.cosigner.verifier.time(of: text, in: SignedNote.parse(text + "\n" + line).signatures) != nil)
            let recorded = try await w1.size(signer.name)
            #expect(recorded == latest.0)
        }
        await w1.stop()
    }

    @Test("a fork by a superuser (the log truncated below a cosigned size, new events appended): the witnesses refuse, and only checkpoints consistent with the published one are ever served")
    func forkAttempt() async throws {
        let signer = try NoteSigner(name: "fork.test/ledger")
        let (w1, w2, policy) = try await Self.twoWitnesses(for: signer, group: "any")
        try await LiveServer.run(signer: signer, witnesses: policy) { server in
            let cosigned = try await Self.append(server, 40)
            try await waitUntil(timeout: .seconds(30), "cosigned \(cosigned)") {
                (try? await Self.published(server, policy).checkpoint.size) ?? 0 >= cosigned
            }
            let before = try await Self.published(server, policy).checkpoint
            // The superuser rewrites history: events past 30 gone, with their tree, and new ones appended.
            try await truncateLog(server.db, to: 30, keepingCheckpoints: true)
            // Fewer events than were removed: the checkpointer notices, rebuilds its tree from the
            // store and signs the forked tree of 35 (older than the published 40: nothing to send);
            // then the larger forked tree, which the witnesses refuse (its proof from 40 fails).
            _ = try await Self.append(server, 5)
            try await waitUntil(timeout: .seconds(30), "the forked tree of 35 signed") {
                var signed: Int64 = 0
                for try await size in try await server.db.query("SELECT max(tree_size) FROM ledger_checkpoints WHERE tree_size = 35")
                    .decode(Int64?.self) { signed = size ?? 0 }
                return signed == 35
            }
            #expect(try await Self.append(server, 20) == 55)
            try await waitUntil(timeout: .seconds(30), "a refusal: the forked tree does not extend the witnesses'") {
                try await Self.refusals(server, status: "422") > 0
            }
            for _ in 0 ..< 3 {
                let served = try Checkpoint.open(try await server.client("anyone").checkpoint(), verifier: signer.verifier)
                #expect(served == before, "the published checkpoint is still the one before the fork")
            }
            let sizes = [try await w1.size(signer.name), try await w2.size(signer.name)]
            #expect(sizes == [before.size, before.size])
        }
        await w1.stop()
        await w2.stop()
    }
}
