import Foundation
import LedgerApp
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A grant's evidence on shards through both levels (issue 49): the event in its shard's
/// checkpoint, that checkpoint an entry of the top log, checked with the deployment's key alone
/// (`EvidenceVerifier`, `ledger audit verify`), and each level by Go's `sumdb/tlog` and `note`.
@Suite("Evidence on shards")
struct ShardEvidenceTests {
    /// A grant on each shard: its evidence verifies through both levels with the deployment's key,
    /// in Swift, with ledger audit verify and with Go for each level; a tampered level, another
    /// shard, another key and a level removed are refused; both levels as two tlog-proofs joined;
    /// no shard, a bad level refused.
    @Test("a grant's evidence on each shard verifies through both levels (Swift, ledger, Go); tampering refused")
    func bothLevels() async throws {
        let signer = try NoteSigner(name: "evidence.test/ledger")
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        try await LiveShards.run(shards: shards, signer: signer) { live in
            let (devin, alice, auditor) = (live.client("devin"), live.client("alice"), live.client("auditor", roles: ["auditor"]))
            var granted: [(shard: Int, position: Int64, id: String)] = []
            while Set(granted.map(\.shard)).count < 2 {
                let id = try await devin.prepareCollaboration(
                    localIdentifier: "ev \(granted.count)", title: "Evidence", initiator: Initiator(handle: "devin@example.com")
                ).identifier
                let person = SimulatedPerson(collaborationId: id, devices: 1)
                _ = try await devin.updateParticipants(added: [person.rootHashData], in: id)
                guard case .granted(_, _, let position) = try await verify(alice, person, in: id) else {
                    Issue.record("not granted")
                    return
                }
                if !granted.contains(where: { $0.shard == live.shard(of: id) }) { granted.append((live.shard(of: id), position, id)) }
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shard-evidence-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            for (shard, position, _) in granted {
                let evidence = try await Self.evidence(auditor, position: position, shard: shard)
                let report = try EvidenceVerifier.verify(evidence, key: signer.verifier)
                #expect(report.shard == shard && report.position == position && report.deviceProofChecked)
                #expect((report.topTreeSize ?? 0) >= 1)
                try await Self.go(evidence, signer: signer, folder: folder)
                try await Self.cli(evidence, signer: signer, folder: folder)
                try await Self.tlogProofs(auditor, position: position, shard: shard, signer: signer, folder: folder)
                try Self.refusals(evidence, signer: signer, shards: live.shards.count)
            }
            // Refused by the router: no shard, a shard that is not one, another format, a level without a tlog-proof.
            for (query, status) in [
                ("", 400), ("?shard=2", 400), ("?shard=01", 400), ("?shard=0&format=xml", 400), ("?shard=0&size=1", 400),
                ("?shard=0&format=tlog-proof&level=other", 400), ("?shard=0&level=top", 400), ("?shard=0&format=json&level=top", 400),
            ] {
                let path = "v1/audit/evidence/\(granted[0].position)\(query)"
                let (_, response) = try await TestHTTP.data(for: try await live.request("GET", path, as: "auditor", roles: ["auditor"]))
                #expect(response.statusCode == status, "\(path)")
            }
            try await Self.anotherTree(granted[0], live: live, auditor: auditor, signer: signer)
            let notAuditor = await rejection {
                _ = try await live.client("erin").evidence(position: granted[0].position, shard: granted[0].shard)
            }
            #expect(notAuditor?.status == 403)
        }
    }

    /// The evidence, once the top log covers the event: the server waits 5 s for it, then answers
    /// 503 `not_checkpointed` with `Retry-After`, as a client retries (under the whole suite's load
    /// the top log's recording and signing took longer). Any other refusal is thrown.
    static func evidence(_ auditor: LedgerClient, position: Int64, shard: Int) async throws -> Evidence {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                return try await auditor.evidence(position: position, shard: shard)
            } catch let error as LedgerError where error.code == "not_checkpointed" && ContinuousClock.now < deadline {
                continue
            }
        }
    }

    /// Each level as a C2SP tlog-proof, checked by Go: the event under its shard's key, the top
    /// entry under the deployment's.
    static func go(_ evidence: Evidence, signer: NoteSigner, folder: URL) async throws {
        let top = try #require(evidence.top)
        let shardKey = try signer.renamed(ShardCheckpointRecorded.origin(shard: top.shard, top: signer.name)).verifier
        let levels = [
            (evidence.leaf, evidence.inclusion, evidence.checkpoint, shardKey.text),
            (top.leaf, top.inclusion, top.checkpoint, signer.verifier.text),
        ]
        for (n, (leaf, inclusion, checkpoint, key)) in levels.enumerated() {
            let proof = TlogProof(
                extra: Base64.decode(leaf), index: inclusion.leafIndex, proof: inclusion.hashes.compactMap(Base64.decode),
                checkpoint: checkpoint)
            let file = folder.appendingPathComponent("level-\(top.shard)-\(n).tlog-proof")
            try proof.text.write(to: file, atomically: true, encoding: .utf8)
            let output = try await GoTilecheck.tlogProof(file: file.path, keys: [key])
            #expect(output.status == 0 && output.output.hasPrefix("OK"), "level \(n): \(output.output)")
        }
    }

    /// Both levels as the ledger serves them in C2SP tlog-proofs (`format=tlog-proof`, `level=shard`
    /// and `top`): joined by `EvidenceVerifier` and by `ledger audit verify --top`, each checked
    /// alone by Go; the other shard's top level, or the top proof where the shard's should be, refused.
    static func tlogProofs(_ auditor: LedgerClient, position: Int64, shard: Int, signer: NoteSigner, folder: URL) async throws {
        var texts: (shard: String, top: String) = ("", "")
        let deadline = ContinuousClock.now + .seconds(60)
        while texts.shard.isEmpty {
            do {
                texts = (
                    try await auditor.tlogProof(position: position, shard: shard, top: false),
                    try await auditor.tlogProof(position: position, shard: shard, top: true)
                )
            } catch let error as LedgerError where error.code == "not_checkpointed" && ContinuousClock.now < deadline {
                continue
            }
        }
        let (proof, top) = (try TlogProof(text: texts.shard), try TlogProof(text: texts.top))
        let report = try EvidenceVerifier.verify(proof, top: top, key: signer.verifier, policy: nil)
        #expect(report.shard == shard && report.position == position && report.deviceProofChecked)
        #expect(throws: EvidenceVerifier.Failure.self, "the top proof where the shard's should be") {
            try EvidenceVerifier.verify(top, top: top, key: signer.verifier, policy: nil)
        }
        #expect(throws: EvidenceVerifier.Failure.self, "another deployment's key") {
            try EvidenceVerifier.verify(proof, top: top, key: try NoteSigner(name: signer.name).verifier, policy: nil)
        }
        let files = (
            folder.appendingPathComponent("event-\(shard).tlog-proof"), folder.appendingPathComponent("top-\(shard).tlog-proof")
        )
        try texts.shard.write(to: files.0, atomically: true, encoding: .utf8)
        try texts.top.write(to: files.1, atomically: true, encoding: .utf8)
        let shardKey = try signer.renamed(ShardCheckpointRecorded.origin(shard: shard, top: signer.name)).verifier
        for (file, key) in [(files.0, shardKey), (files.1, signer.verifier)] {
            let output = try await GoTilecheck.tlogProof(file: file.path, keys: [key.text])
            #expect(output.status == 0 && output.output.hasPrefix("OK"), "\(file.lastPathComponent): \(output.output)")
        }
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
        let output = try await ProcessRunner.run(
            ledgerBinary(), ["audit", "verify", files.0.path, "--top", files.1.path, "--key", signer.verifier.text],
            environment: environment)
        #expect(output.status == 0, "\(output.output)")
        #expect(output.output.contains("/shard/\(shard), whose checkpoint is in the top log"), "\(output.output)")
        // The other shard's top level (written by an earlier round) joined to this proof: refused.
        let other = folder.appendingPathComponent("top-\(1 - shard).tlog-proof")
        if FileManager.default.fileExists(atPath: other.path) {
            let joined = try await ProcessRunner.run(
                ledgerBinary(), ["audit", "verify", files.0.path, "--top", other.path, "--key", signer.verifier.text],
                environment: environment)
            #expect(joined.status != 0, "\(joined.output)")
        }
    }

    /// `ledger audit verify FILE --key` with the deployment's key.
    static func cli(_ evidence: Evidence, signer: NoteSigner, folder: URL) async throws {
        let file = folder.appendingPathComponent("evidence-\(evidence.top?.shard ?? -1).json")
        try JSONEncoder().encode(evidence).write(to: file)
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
        let output = try await ProcessRunner.run(
            ledgerBinary(), ["audit", "verify", file.path, "--key", signer.verifier.text], environment: environment)
        #expect(output.status == 0, "\(output.output)")
        #expect(output.output.contains("/shard/\(evidence.top?.shard ?? -1), whose checkpoint is in the top log"), "\(output.output)")
    }

    /// The event's evidence under a later checkpoint of its shard (valid on its own) joined to the
    /// top level of an earlier one is refused: the top entry must record the evidence's tree.
    static func anotherTree(
        _ grant: (shard: Int, position: Int64, id: String), live: LiveShards, auditor: LedgerClient, signer: NoteSigner
    ) async throws {
        let first = try await Self.evidence(auditor, position: grant.position, shard: grant.shard)
        _ = try await live.client("devin").updateParticipants(
            added: [SimulatedPerson(collaborationId: grant.id, devices: 1).rootHashData], in: grant.id)
        try await waitUntil("shard \(grant.shard)'s grown tree recorded in the top log") {
            try await Self.evidence(auditor, position: grant.position, shard: grant.shard).inclusion.treeSize > first.inclusion.treeSize
        }
        let later = try await Self.evidence(auditor, position: grant.position, shard: grant.shard)
        _ = try EvidenceVerifier.verify(later, key: signer.verifier)
        var joined = later
        joined.top = first.top
        #expect(throws: EvidenceVerifier.Failure.self, "a later tree under an earlier top entry") {
            try EvidenceVerifier.verify(joined, key: signer.verifier)
        }
    }

    /// What no auditor may be shown as proved.
    static func refusals(_ evidence: Evidence, signer: NoteSigner, shards: Int) throws {
        let top = try #require(evidence.top)
        var tampered: [(String, Evidence, NoteVerifier)] = []
        var hash = evidence
        var bytes = try #require(Base64.decode(top.inclusion.hashes.first ?? top.inclusion.leafHash))
        bytes[0] ^= 1
        if top.inclusion.hashes.isEmpty {
            hash.top?.inclusion.leafHash = Base64.encode(bytes)
        } else {
            hash.top?.inclusion.hashes[0] = Base64.encode(bytes)
        }
        tampered.append(("a top inclusion hash flipped", hash, signer.verifier))
        var other = evidence
        other.top?.shard = (top.shard + 1) % shards
        tampered.append(("another shard named", other, signer.verifier))
        var entry = evidence
        entry.top?.entry.data = top.entry.data.replacingOccurrences(of: "\"size\":", with: "\"size\":1")
        tampered.append(("the recorded size altered", entry, signer.verifier))
        var bare = evidence
        bare.top = nil
        tampered.append(("the top level removed", bare, signer.verifier))
        tampered.append(("another deployment's key", evidence, try NoteSigner(name: signer.name).verifier))
        for (what, evidence, key) in tampered {
            #expect(throws: EvidenceVerifier.Failure.self, "\(what)") { try EvidenceVerifier.verify(evidence, key: key) }
        }
    }
}
