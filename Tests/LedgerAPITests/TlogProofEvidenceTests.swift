import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import Testing
import TransparencyLog

/// SPEC "Evidence as C2SP tlog-proof" (issue 41): a grant's evidence as a `.tlog-proof` whose
/// checkpoint two real witnesses cosigned, checked offline by the real `ledger audit verify
/// --policy` and, independently, by Go's `sumdb/tlog` and `note` (Go/tlogproofcheck, a verifier no
/// one here wrote); every tampering refused by both.
@Suite("Evidence as a C2SP tlog-proof")
struct TlogProofEvidenceTests {
    /// Files in a fresh folder, and the commands that check them.
    struct Bench {
        let folder: URL
        let ledger: String
        let checker: String

        func write(_ name: String, _ text: String) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        /// `ledger audit verify ARGS` with no LEDGER_* variable set: only what the arguments name counts.
        func audit(_ arguments: [String]) async throws -> ProcessRunner.Output {
            let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
            return try await ProcessRunner.run(ledger, ["audit", "verify"] + arguments, environment: environment)
        }

        /// Go/tlogproofcheck on a proof file, with the log's key and the witnesses' keys.
        func go(_ proof: String, _ keys: [String]) async throws -> ProcessRunner.Output {
            try await ProcessRunner.run(checker, [proof] + keys)
        }

        /// Builds Go/tlogproofcheck once into the folder (GOPATH mode, Debian's x/mod).
        static func make() async throws -> Bench {
            let ledger = ledgerBinary()
            try #require(FileManager.default.isExecutableFile(atPath: ledger), "build the ledger executable first: \(ledger)")
            let go = try #require(
                ProcessRunner.which("go"), "Go is installed by scripts/setup-system.sh (golang-go, golang-golang-x-mod-dev)")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tlog-proof-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let program = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Go/tlogproofcheck/main.go")
                .path
            let checker = folder.appendingPathComponent("tlogproofcheck").path
            let environment = ProcessInfo.processInfo.environment.merging([
                "GOPATH": "/usr/share/gocode", "GO111MODULE": "off", "GOFLAGS": "", "GOCACHE": folder.path + "/cache", "HOME": folder.path,
            ]) { $1 }
            let built = try await ProcessRunner.run(go, ["build", "-o", checker, program], environment: environment)
            try #require(built.status == 0, "go build: \(built.output)")
            return Bench(folder: folder, ledger: ledger, checker: checker)
        }
    }

    /// A grant's tlog-proof cosigned by two witnesses verifies with ledger audit verify --policy
    /// and with Go's sumdb/tlog; a tampered entry, index or proof line, a checkpoint signature that
    /// does not verify, a quorum not met and foreign openings are refused.
    @Test("a grant's tlog-proof, cosigned twice, verifies in ledger and Go; tampering and no quorum refused")
    func grantProof() async throws {
        let bench = try await Bench.make()
        defer { try? FileManager.default.removeItem(at: bench.folder) }
        let signer = try NoteSigner(name: "tlog-proof.test/ledger")
        let (w1, w2) = (try TestWitness("w1.test", log: signer.verifier), try TestWitness("w2.test", log: signer.verifier))
        try await w1.start()
        try await w2.start()
        let witnessLines = "\(w1.policyLine("W1"))\n\(w2.policyLine("W2"))\n"
        let policyText = "log \(signer.verifier.text)\n" + witnessLines + "group both all W1 W2\nquorum both\n"
        let policy = try WitnessPolicy(policyText)
        try await LiveServer.run(signer: signer, witnesses: policy) { server in
            let devin = server.client("devin")
            let started = try await devin.prepareCollaboration(
                localIdentifier: "doc-41", title: "Spicy signatures", initiator: Initiator(handle: "devin@example.com", name: "Devin"))
            let person = SimulatedPerson(collaborationId: started.identifier, devices: 1)
            _ = try await devin.updateParticipants(added: [person.rootHashData], in: started.identifier)
            guard case .granted(_, _, let position) = try await verify(server.client("alice"), person, in: started.identifier) else {
                Issue.record("expected a grant")
                return
            }
            let auditor = server.client("auditor", roles: ["auditor"])
            try await waitUntil(timeout: .seconds(90), "a checkpoint both witnesses cosigned, covering the grant") {
                (try? await auditor.publishedCheckpoint(key: signer.verifier, policy: policy).checkpoint.size) ?? 0 >= position
            }

            // Saved as an auditor would: the proof and the policy, nothing else.
            let text = try await auditor.tlogProof(position: position)
            let proof = try TlogProof(text: text)
            let (checkpoint, cosigners) = try policy.verify(proof.checkpoint)
            #expect(Set(cosigners) == ["W1", "W2"] && proof.index == position - 1 && checkpoint.size >= position)
            let evidence = try await auditor.evidence(position: position)
            #expect(proof.extra.map(Base64.encode) == evidence.leaf, "extra is the event's leaf bytes")
            let (file, policyFile) = (try bench.write("grant.tlog-proof", text), try bench.write("witnesses.policy", policyText))

            // (1) `ledger audit verify FILE.tlog-proof --policy P`.
            let ok = try await bench.audit([file, "--policy", policyFile])
            #expect(ok.status == 0, "\(ok.output)")
            #expect(
                ok.output.contains("audit verify: OK, AccessGranted at position \(position) is in the log of \(checkpoint.size) events"),
                "\(ok.output)")
            #expect(ok.output.contains("the device's proof verifies") && ok.output.contains("cosigned by W1, W2"), "\(ok.output)")

            // (2) Go's sumdb/tlog recomputes the inclusion against the cosigned checkpoint.
            let keys = [signer.verifier.text, w1.cosigner.verifier.text, w2.cosigner.verifier.text]
            let go = try await bench.go(file, keys)
            #expect(go.status == 0, "\(go.output)")
            #expect(
                go.output.contains(
                    "OK index \(position - 1) size \(checkpoint.size) root \(Base64.encode(checkpoint.rootHash)) cosigned-by w1.test,w2.test"
                ),
                "\(go.output)")

            // (3) Tampered: each refused by both, naming what failed.
            var leaf = try #require(proof.extra)
            leaf[leaf.count - 1] ^= 1  // the grant's time, one microsecond off
            var tampered: [(what: String, proof: TlogProof, reason: String)] = []
            tampered.append(
                ("the entry", TlogProof(extra: leaf, index: proof.index, proof: proof.proof, checkpoint: proof.checkpoint), "inclusion"))
            tampered.append(
                (
                    "the index", TlogProof(extra: proof.extra, index: proof.index + 1, proof: proof.proof, checkpoint: proof.checkpoint),
                    "index"
                ))
            var hashes = proof.proof
            try #require(!hashes.isEmpty, "the grant is not the only leaf, so its proof has hashes")
            hashes[0] = MerkleTree.leafHash(Array("another".utf8))
            tampered.append(
                (
                    "a proof line", TlogProof(extra: proof.extra, index: proof.index, proof: hashes, checkpoint: proof.checkpoint),
                    "inclusion"
                ))
            for (what, forged, reason) in tampered {
                let path = try bench.write("tampered.tlog-proof", forged.text)
                let refused = try await bench.audit([path, "--policy", policyFile])
                #expect(refused.status == 2 && refused.output.contains("audit verify: FAILED: \(reason)"), "\(what): \(refused.output)")
                let goRefused = try await bench.go(path, keys)
                #expect(goRefused.status == 1 && goRefused.output.contains("FAIL:"), "\(what): \(goRefused.output)")
            }

            // The checkpoint's root changed under its signatures: the log's signature does not verify.
            let root = Base64.encode(checkpoint.rootHash)
            let moved = TlogProof(
                extra: proof.extra, index: proof.index, proof: proof.proof,
                checkpoint: proof.checkpoint.replacingOccurrences(of: "\n\(root)\n", with: "\n\(Base64.encode(MerkleTree.leafHash([1])))\n")
            )
            let unsigned = try await bench.audit([try bench.write("moved.tlog-proof", moved.text), "--policy", policyFile])
            #expect(
                unsigned.status == 2 && unsigned.output.contains("FAILED: checkpoint") && unsigned.output.contains("does not verify"),
                "\(unsigned.output)")
            // Another key under the log's name: no signature by it.
            let otherLog = try NoteSigner(name: signer.name).verifier.text
            let foreign = try bench.write("foreign.policy", "log \(otherLog)\n" + witnessLines + "group both all W1 W2\nquorum both\n")
            let notOurs = try await bench.audit([file, "--policy", foreign])
            #expect(notOurs.status == 2 && notOurs.output.contains("FAILED: checkpoint"), "\(notOurs.output)")
            // No entry: the proof alone says nothing of which event it is.
            let bare = TlogProof(extra: nil, index: proof.index, proof: proof.proof, checkpoint: proof.checkpoint)
            let noEntry = try await bench.audit([try bench.write("bare.tlog-proof", bare.text), "--policy", policyFile])
            #expect(noEntry.status == 2 && noEntry.output.contains("FAILED: entry"), "\(noEntry.output)")
            // The log's key alone (no witnesses checked): accepted with ours, refused with another.
            let keyed = try await bench.audit([file, "--key", signer.verifier.text])
            #expect(keyed.status == 0 && !keyed.output.contains("cosigned by"), "\(keyed.output)")
            let wrongKey = try await bench.audit([file, "--key", otherLog])
            #expect(wrongKey.status == 2 && wrongKey.output.contains("FAILED: checkpoint"), "\(wrongKey.output)")
            // A quorum of three witnesses, one of whom never cosigned.
            let w3 = try Cosigner(name: "w3.test")
            let three = try bench.write(
                "three.policy",
                "log \(signer.verifier.text)\n" + witnessLines + "witness W3 \(w3.verifier.text)\ngroup all3 all W1 W2 W3\nquorum all3\n")
            let short = try await bench.audit([file, "--policy", three])
            #expect(
                short.status == 2 && short.output.contains("not cosigned by the policy's quorum (cosigned by: W1, W2)"), "\(short.output)")

            // Openings travel in the JSON evidence: the start's check against its commitments; another
            // event's evidence, or a value changed, is refused.
            let startText = try await auditor.tlogProof(position: started.position)
            var startEvidence = try await auditor.evidence(position: started.position)
            let openingCount = startEvidence.openings?.count ?? 0
            #expect(openingCount >= 2, "the title and the initiator's handle and name are committed")
            let startFile = try bench.write("start.tlog-proof", startText)
            let withOpenings = try await bench.audit([
                startFile, "--policy", policyFile, "--openings", try bench.write("start.json", Self.json(startEvidence)),
            ])
            #expect(
                withOpenings.status == 0 && withOpenings.output.contains("\(openingCount) personal value(s) open their commitments"),
                "\(withOpenings.output)")
            let grantEvidence = try bench.write("grant.json", Self.json(evidence))
            let otherEvent = try await bench.audit([startFile, "--policy", policyFile, "--openings", grantEvidence])
            #expect(otherEvent.status == 2 && otherEvent.output.contains("another event"), "\(otherEvent.output)")
            startEvidence.openings?[0].value += " (altered)"
            let altered = try await bench.audit([
                startFile, "--policy", policyFile, "--openings", try bench.write("altered.json", Self.json(startEvidence)),
            ])
            #expect(altered.status == 2 && altered.output.contains("FAILED: openings"), "\(altered.output)")
        }
        await w1.stop()
        await w2.stop()
    }

    static func json(_ evidence: Evidence) throws -> String {
        String(decoding: try JSONEncoder().encode(evidence), as: UTF8.self)
    }
}
