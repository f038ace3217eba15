import Foundation
import HTTPTypes
import LedgerAPI
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Testing
import TransparencyLog

/// The verifiable log's endpoints through the real router, checked as an auditor would:
/// with the verifier key and the RFC 9162 verifier, and every bad input a clear 400.
@Suite("Verifiable log over HTTP")
struct LogAPITests {
    static func decode<T: Decodable>(_ type: T.Type, _ raw: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(raw.utf8))
    }

    /// A collaboration with alice granted (device 0) and bob invited; the checkpoint covering it.
    static func grantedLog(_ api: LiveServer) async throws -> (id: String, grantPosition: Int64, key: NoteVerifier, checkpoint: Checkpoint)
    {
        let id = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
        let alice = SimulatedPerson(collaborationId: id, devices: 2)
        let bob = SimulatedPerson(collaborationId: id, devices: 1)
        try await api.call(
            .post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"added":["\#(alice.rootHash)","\#(bob.rootHash)"]}"#)
        let granted = try await api.verify(id, alice, as: "alice", device: 1, der: false)
        #expect(granted.status == .ok, "\(granted.raw)")
        let position = try #require(granted.body["position"]?.int)
        try await waitUntil(timeout: .seconds(30), "a checkpoint covering the grant") {
            let note = try await api.call(.get, "/v1/log/checkpoint", as: "eve").raw
            return (try? Checkpoint(text: note.components(separatedBy: "\n\n")[0] + "\n").size) ?? 0 >= position
        }
        let key = try NoteVerifier(try await api.call(.get, "/v1/log/key", as: "eve").raw)
        let checkpoint = try Checkpoint.open(try await api.call(.get, "/v1/log/checkpoint", as: "eve").raw, verifier: key)
        return (id, position, key, checkpoint)
    }

    @Test("inclusion and consistency proofs served verify against signed checkpoints")
    func proofs() async throws {
        let signer = try NoteSigner(name: "api.test/ledger")
        try await LiveServer.run(signer: signer) { api in
            let (_, _, key, first) = try await Self.grantedLog(api)
            #expect(key == signer.verifier)
            let (_, _, _, second) = try await Self.grantedLog(api)
            let kept = try await api.call(.get, "/v1/log/checkpoint?size=\(first.size)", as: "eve")
            #expect(try Checkpoint.open(kept.raw, verifier: key) == first)
            for checkpoint in [first, second] {
                for position in 1...checkpoint.size {
                    let r = try await api.call(.get, "/v1/log/proofs/inclusion?position=\(position)&treeSize=\(checkpoint.size)", as: "eve")
                    let proof = try Self.decode(InclusionProof.self, r.raw)
                    #expect(proof.position == position && proof.leafIndex == position - 1 && proof.treeSize == checkpoint.size)
                    try MerkleProof.verifyInclusion(
                        leafIndex: proof.leafIndex, treeSize: checkpoint.size, leafHash: Base64.decode(proof.leafHash)!,
                        proof: proof.hashes.map { Base64.decode($0)! }, root: checkpoint.rootHash)
                }
            }
            let r = try await api.call(.get, "/v1/log/proofs/consistency?from=\(first.size)&to=\(second.size)", as: "eve")
            let proof = try Self.decode(ConsistencyProof.self, r.raw)
            try MerkleProof.verifyConsistency(
                size1: first.size, size2: second.size, root1: first.rootHash, root2: second.rootHash,
                proof: proof.hashes.map { Base64.decode($0)! })
            // Without treeSize, the latest checkpoint's size.
            let latest = try Self.decode(
                InclusionProof.self, try await api.call(.get, "/v1/log/proofs/inclusion?position=1", as: "eve").raw)
            #expect(latest.treeSize >= second.size)
        }
    }

    @Test("bad input of the log endpoints is a 400 with a clear message, and changes nothing")
    func badInput() async throws {
        try await LiveServer.run(signer: try NoteSigner(name: "api.test/ledger")) { api in
            let (_, _, _, checkpoint) = try await Self.grantedLog(api)
            let n = checkpoint.size
            let events = try await api.eventCount()
            let cases: [(String, String)] = [
                ("/v1/log/proofs/inclusion?position=0", "position must be an integer of 1 or more"),
                ("/v1/log/proofs/inclusion?position=abc", "position must be an integer of 1 or more"),
                ("/v1/log/proofs/inclusion", "position is required"),
                ("/v1/log/proofs/inclusion?position=\(n + 1)&treeSize=\(n)", "is not in the tree of size"),
                ("/v1/log/proofs/inclusion?position=1&treeSize=\(n + 1000)", "past the latest checkpoint"),
                ("/v1/log/proofs/inclusion?position=1&treeSize=0", "treeSize must be an integer of 1 or more"),
                ("/v1/log/proofs/consistency?from=3&to=2", "larger than"),
                ("/v1/log/proofs/consistency?from=1&to=\(n + 1000)", "past the latest checkpoint"),
                ("/v1/log/proofs/consistency?from=x&to=2", "from must be a non-negative integer"),
                ("/v1/log/proofs/consistency?from=1", "from and to are required"),
                ("/v1/log/checkpoint?size=-1", "size must be a non-negative integer"),
                ("/v1/audit/evidence/0", "position must be an integer of 1 or more"),
                ("/v1/audit/evidence/abc", "position must be an integer of 1 or more"),
                ("/v1/audit/evidence/1?format=xml", "format must be json or tlog-proof"),
                ("/v1/audit/evidence/1?shard=1", "shard must be 0"),
                ("/v1/audit/evidence/1?shard=-1", "shard must be a non-negative integer"),
                ("/v1/audit/evidence/1?format=tlog-proof&level=top", "level must be shard"),
                ("/v1/audit/evidence/1?size=0", "size must be an integer of 1 or more"),
            ]
            for (uri, message) in cases {
                let r = try await api.call(.get, uri, as: "auditor", roles: ["auditor"])
                #expect(r.status == .badRequest, "\(uri): \(r.raw)")
                #expect(r.body["error"]?["message"]?.string?.contains(message) == true, "\(uri): \(r.raw)")
            }
            #expect(try await api.call(.get, "/v1/log/checkpoint?size=\(n + 1000)", as: "eve").status == .notFound)
            #expect(try await api.call(.get, "/v1/audit/evidence/\(n + 1000)", as: "auditor", roles: ["auditor"]).status == .notFound)
            // Under a checkpoint of a size never signed, or one that does not hold the event: 404;
            // under the one signed, as without size.
            #expect(
                try await api.call(.get, "/v1/audit/evidence/1?size=\(n + 1000)", as: "auditor", roles: ["auditor"]).status == .notFound)
            #expect(try await api.call(.get, "/v1/audit/evidence/2?size=1", as: "auditor", roles: ["auditor"]).status == .notFound)
            let under = try await api.call(.get, "/v1/audit/evidence/1?size=\(n)&shard=0", as: "auditor", roles: ["auditor"])
            #expect(under.status == .ok && under.body["inclusion"]?["treeSize"]?.int == n, "\(under.raw)")
            for uri in ["/v1/log/key", "/v1/log/checkpoint", "/v1/log/proofs/inclusion?position=1", "/v1/audit/evidence/1"] {
                #expect(try await api.call(.get, uri).status == .unauthorized, "\(uri)")
            }
            #expect(try await api.eventCount() == events)
        }
    }

    @Test("a grant's evidence verifies offline, device proof included; forged evidence is refused")
    func evidence() async throws {
        try await LiveServer.run(signer: try NoteSigner(name: "api.test/ledger")) { api in
            let (id, position, key, _) = try await Self.grantedLog(api)
            let r = try await api.call(.get, "/v1/audit/evidence/\(position)", as: "auditor", roles: ["auditor"])
            #expect(r.status == .ok, "\(r.raw)")
            let evidence = try Self.decode(Evidence.self, r.raw)
            let report = try EvidenceVerifier.verify(evidence, key: key)
            #expect(report.type == "AccessGranted" && report.position == position && report.deviceProofChecked)
            #expect(evidence.event.streamId == Streams.collaboration(id))

            // The owner and the account granted (its device checks its own grant) may fetch it; no one else.
            #expect(try await api.call(.get, "/v1/audit/evidence/\(position)", as: "devin").status == .ok)
            #expect(try await api.call(.get, "/v1/audit/evidence/\(position)", as: "alice").status == .ok)
            #expect(try await api.call(.get, "/v1/audit/evidence/\(position)", as: "mallory").status == .forbidden)

            func refused(_ what: String, key: NoteVerifier = key, _ change: (inout Evidence) throws -> Void) throws {
                var forged = evidence
                try change(&forged)
                #expect(throws: EvidenceVerifier.Failure.self, "\(what)") { try EvidenceVerifier.verify(forged, key: key) }
            }
            var grant = try CanonicalJSON.decode(CollaborationEvent.AccessGranted.self, from: evidence.event.data)
            grant.account = "mallory"
            try refused("the grant moved to another account") { $0.event.data = CanonicalJSON.encode(grant) }
            try refused("the time moved") { $0.event.recordedAt = RecordedTime.text(micros: RecordedTime.micros($0.event.recordedAt)! + 1) }
            try refused("a path hash replaced") { $0.inclusion.hashes[0] = Base64.encode([UInt8](repeating: 7, count: 32)) }
            try refused("a path hash dropped") { $0.inclusion.hashes.removeLast() }
            try refused("another tree size") { $0.inclusion.treeSize += 1 }
            try refused("another key", key: try NoteSigner(name: "api.test/ledger").verifier) { _ in }
            // A leaf and event rewritten together, re-hashed: the path no longer leads to the signed root.
            try refused("event, leaf and leaf hash rewritten together") { e in
                e.event.data = CanonicalJSON.encode(grant)
                let leaf = EventLeaf.bytes(
                    position: e.event.position, streamId: e.event.streamId, version: e.event.version,
                    eventId: UUID(uuidString: e.event.eventId)!,
                    type: e.event.type, data: e.event.data, metadata: e.event.metadata,
                    recordedAtMicros: RecordedTime.micros(e.event.recordedAt)!)
                e.leaf = Base64.encode(leaf)
                e.inclusion.leafHash = Base64.encode(MerkleTree.leafHash(leaf))
            }
            // A device proof that does not verify: the signature of another challenge.
            var wrongSignature = try CanonicalJSON.decode(CollaborationEvent.AccessGranted.self, from: evidence.event.data)
            wrongSignature.challenge = Base64.encode([UInt8](repeating: 1, count: 32))
            #expect(throws: EvidenceVerifier.Failure.self) { try EvidenceVerifier.checkDeviceProof(CanonicalJSON.encode(wrongSignature)) }
        }
    }

    /// format=tlog-proof answers the same evidence as a C2SP tlog-proof; none or format=json the
    /// JSON unchanged; another format a 400 invalid_query.
    @Test("format=tlog-proof gives the evidence as a C2SP tlog-proof, json or none the JSON, another a 400")
    func tlogProofFormat() async throws {
        try await LiveServer.run(signer: try NoteSigner(name: "api.test/ledger")) { api in
            let (_, position, key, _) = try await Self.grantedLog(api)
            let uri = "/v1/audit/evidence/\(position)"
            let plain = try await api.call(.get, uri, as: "auditor", roles: ["auditor"])
            let json = try await api.call(.get, uri + "?format=json", as: "auditor", roles: ["auditor"])
            #expect(plain.status == .ok && json.status == .ok, "\(json.raw)")
            let evidence = try Self.decode(Evidence.self, plain.raw)
            #expect(try Self.decode(Evidence.self, json.raw) == evidence)

            let r = try await api.call(.get, uri + "?format=tlog-proof", as: "auditor", roles: ["auditor"])
            #expect(r.status == .ok, "\(r.raw)")
            #expect(r.raw.hasPrefix("c2sp.org/tlog-proof@v1\nextra \(evidence.leaf)\nindex \(position - 1)\n"), "\(r.raw)")
            let proof = try TlogProof(text: r.raw)
            #expect(proof.text == r.raw, "one spelling")
            #expect(proof.extra.map(Base64.encode) == evidence.leaf && proof.index == evidence.inclusion.leafIndex)
            #expect(proof.proof.map(Base64.encode) == evidence.inclusion.hashes && proof.checkpoint == evidence.checkpoint)
            let report = try EvidenceVerifier.verify(proof, key: key, policy: nil, openings: evidence.openings ?? [])
            #expect(report.type == "AccessGranted" && report.position == position && report.deviceProofChecked)
            #expect(report.openingsChecked == (evidence.openings ?? []).count && report.cosigners == nil)
            // Who may fetch it is as for the JSON evidence.
            #expect(try await api.call(.get, uri + "?format=tlog-proof", as: "devin").status == .ok)
            #expect(try await api.call(.get, uri + "?format=tlog-proof", as: "mallory").status == .forbidden)
            #expect(try await api.call(.get, uri + "?format=tlog-proof").status == .unauthorized)

            for bad in ["xml", "TLOG-PROOF", "tlog-proof%2Cjson", "c2sp.org%2Ftlog-proof%40v1"] {
                let refused = try await api.call(.get, uri + "?format=\(bad)", as: "auditor", roles: ["auditor"])
                #expect(refused.status == .badRequest && refused.body.errorCode == "invalid_query", "\(bad): \(refused.raw)")
                #expect(
                    refused.body["error"]?["message"]?.string?.contains("format must be json or tlog-proof") == true,
                    "\(bad): \(refused.raw)")
            }
        }
    }
}
