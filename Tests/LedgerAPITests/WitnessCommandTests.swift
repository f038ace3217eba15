import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerPostgres
import LedgerTestSupport
import Testing
import TransparencyLog

/// `ledger witness serve`, the real binary over HTTP: every status of C2SP `tlog-witness` v1, and
/// its record surviving a `kill -9` between two submissions.
@Suite("ledger witness")
struct WitnessCommandTests {
    static let log = try! NoteSigner(name: "witnessed.test/log")
    static let leaves = (0 ..< 40).map { MerkleTree.leafHash(Array("entry \($0)".utf8)) }
    static func root(_ n: Int) -> MerkleTree.Hash { MerkleTree.root(leafHashes: leaves[..<n]) }
    static func proof(_ m: Int, _ n: Int) -> [MerkleTree.Hash] {
        MerkleTree.consistencyRanges(from: Int64(m), to: Int64(n)).map { MerkleTree.root(leafHashes: leaves[Int($0.lowerBound) ..< Int($0.upperBound)]) }
    }
    static func note(_ n: Int, by signer: NoteSigner = log, origin: String = log.name) throws -> String {
        try signer.sign(Checkpoint(origin: origin, size: Int64(n), rootHash: root(n)).text)
    }

    /// The witness process: started, and killed with SIGKILL.
    struct Running {
        let process: Process
        let port: Int

        static func start(_ key: String, dataDir: String) async throws -> Running {
            let port = try EmbeddedPostgres.freePort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: DeploymentTests.ledgerBinary())
            process.arguments = ["witness", "serve", "--port", String(port), "--key", key, "--log", log.verifier.text, "--data-dir", dataDir]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await waitUntil(timeout: .seconds(30), "the witness listening") {
                (try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/health")!)) != nil
            }
            return Running(process: process, port: port)
        }

        func kill9() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        func add(_ body: String) async throws -> (status: Int, body: String, type: String?) {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/add-checkpoint")!)
            request.httpMethod = "POST"
            request.httpBody = Data(body.utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            let http = response as! HTTPURLResponse
            return (http.statusCode, String(decoding: data, as: UTF8.self), http.value(forHTTPHeaderField: "Content-Type"))
        }
    }

    @Test("every status of the specification, and the record kept across a kill -9")
    func statusesAndDurability() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("witness-command-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cosigner = try Cosigner(name: "w.test")
        let keyFile = folder.appendingPathComponent("key").path
        try cosigner.text.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let dataDir = folder.appendingPathComponent("state").path

        var witness = try await Running.start(keyFile, dataDir: dataDir)
        // 200: the first checkpoint (old 0), its cosignature verifying with the witness key.
        let n10 = try Self.note(10)
        let first = try await witness.add(AddCheckpoint(oldSize: 0, proof: [], note: n10).body)
        #expect(first.status == 200, "\(first.body)")
        let text = try SignedNote.parse(n10).text
        #expect(try cosigner.verifier.time(of: text, in: SignedNote.parse(n10 + first.body).signatures) != nil)
        // 409 with its size, as text/x.tlog.size.
        let stale = try await witness.add(AddCheckpoint(oldSize: 0, proof: [], note: try Self.note(20)).body)
        #expect(stale.status == 409 && stale.body == "10\n" && stale.type == "text/x.tlog.size")
        // 422: a proof that does not verify; another root at its size.
        #expect(try await witness.add(AddCheckpoint(oldSize: 10, proof: Self.proof(9, 20), note: try Self.note(20)).body).status == 422)
        let otherRoot = try Self.log.sign(Checkpoint(origin: Self.log.name, size: 10, rootHash: Self.root(9)).text)
        #expect(try await witness.add(AddCheckpoint(oldSize: 10, proof: [], note: otherRoot).body).status == 422)
        // 400: old past the checkpoint, a malformed body; 403: not the log's key; 404: another log.
        #expect(try await witness.add(AddCheckpoint(oldSize: 30, proof: [], note: try Self.note(20)).body).status == 400)
        #expect(try await witness.add("old ten\n\n" + n10).status == 400)
        #expect(try await witness.add(AddCheckpoint(oldSize: 10, proof: Self.proof(10, 20), note: try Self.note(20, by: NoteSigner(name: Self.log.name))).body).status == 403)
        let stranger = try NoteSigner(name: "other.test/log")
        #expect(try await witness.add(AddCheckpoint(oldSize: 0, proof: [], note: try Self.note(5, by: stranger, origin: stranger.name)).body).status == 404)

        // 200 for 20, then kill -9: the restarted witness holds 20, never 10.
        #expect(try await witness.add(AddCheckpoint(oldSize: 10, proof: Self.proof(10, 20), note: try Self.note(20)).body).status == 200)
        witness.kill9()
        witness = try await Running.start(keyFile, dataDir: dataDir)
        let after = try await witness.add(AddCheckpoint(oldSize: 10, proof: Self.proof(10, 30), note: try Self.note(30)).body)
        #expect(after.status == 409 && after.body == "20\n", "the record written before the answer survived")
        #expect(try await witness.add(AddCheckpoint(oldSize: 20, proof: Self.proof(20, 30), note: try Self.note(30)).body).status == 200)
        witness.kill9()
    }
}
