import AsyncHTTPClient
import Foundation
import LedgerPostgres
import LedgerTestSupport
import LedgerWitness
import NIOCore
import NIOHTTP1
import Testing
import TransparencyLog

/// `ledger witness serve`, the real binary over HTTP: every status of C2SP `tlog-witness` v1, its
/// record surviving a `kill -9` between two submissions, one witness per data folder; and, in
/// this process, replays answered from memory. The witness process is run by `ProcessRunner` and
/// spoken to with AsyncHTTPClient, not Foundation's `Process` and `URLSession`: with those, the
/// suite left the whole test process waiting forever about one run in two (a child never reaped).
@Suite("ledger witness")
struct WitnessCommandTests {
    static let log = try! NoteSigner(name: "witnessed.test/log")
    static let leaves = (0..<40).map { MerkleTree.leafHash(Array("entry \($0)".utf8)) }
    static func root(_ n: Int) -> MerkleTree.Hash { MerkleTree.root(leafHashes: leaves[..<n]) }
    static func proof(_ m: Int, _ n: Int) -> [MerkleTree.Hash] {
        MerkleTree.consistencyRanges(from: Int64(m), to: Int64(n)).map {
            MerkleTree.root(leafHashes: leaves[Int($0.lowerBound)..<Int($0.upperBound)])
        }
    }
    static func note(_ n: Int, by signer: NoteSigner = log, origin: String = log.name) throws -> String {
        try signer.sign(Checkpoint(origin: origin, size: Int64(n), rootHash: root(n)).text)
    }

    struct NeverListened: Error {}

    /// The witness process: started, and killed with SIGKILL.
    struct Running {
        let pid: pid_t
        let port: Int

        /// A free port may be taken by another suite before the witness binds it: a witness that
        /// exits before it listens is started again on another, up to three times.
        static func start(_ key: String, dataDir: String) async throws -> Running {
            for attempt in 1...3 {
                let port = try EmbeddedPostgres.freePort()
                let pid = try ProcessRunner.launch(
                    ledgerBinary(),
                    ["witness", "serve", "--port", String(port), "--key", key, "--log", log.verifier.text, "--data-dir", dataDir],
                    outputPath: "/dev/null")
                // 90 s: a debug `ledger` of some 100 MB starting beside the whole suite once took more than 30.
                try await waitUntil(timeout: .seconds(90), "the witness listening or gone") {
                    await WitnessCommandTests.answersHealth(port: port) || ProcessRunner.exitStatus(of: pid) != nil
                }
                if await WitnessCommandTests.answersHealth(port: port) { return Running(pid: pid, port: port) }
                print("witness: attempt \(attempt) exited before it listened on \(port); starting it again on another port")
            }
            throw NeverListened()
        }

        func kill9() async {
            kill(pid, SIGKILL)
            _ = await ProcessRunner.exit(of: pid)
        }

        func add(_ body: String) async throws -> (status: Int, body: String, type: String?) {
            try await WitnessCommandTests.add(body, port: port)
        }
    }

    /// Whether something answers `GET /health` on `port`.
    static func answersHealth(port: Int) async -> Bool {
        (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/health"), timeout: .seconds(5))) != nil
    }

    /// `POST /add-checkpoint` to the witness on `port`.
    static func add(_ body: String, port: Int) async throws -> (status: Int, body: String, type: String?) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/add-checkpoint")
        request.method = .POST
        request.body = .bytes(Array(body.utf8))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let answer = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: answer), response.headers.first(name: "Content-Type"))
    }

    /// A folder with a witness key in it: the folder, the key file, the data folder to use.
    static func keyedFolder() throws -> (folder: URL, key: String, dataDir: String, cosigner: Cosigner) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("witness-command-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cosigner = try Cosigner(name: "w.test")
        let keyFile = folder.appendingPathComponent("key").path
        try cosigner.text.write(toFile: keyFile, atomically: true, encoding: .utf8)
        return (folder, keyFile, folder.appendingPathComponent("state").path, cosigner)
    }

    @Test("every status of the specification, and the record kept across a kill -9")
    func statusesAndDurability() async throws {
        let (folder, keyFile, dataDir, cosigner) = try Self.keyedFolder()
        defer { try? FileManager.default.removeItem(at: folder) }

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
        #expect(
            try await witness.add(
                AddCheckpoint(oldSize: 10, proof: Self.proof(10, 20), note: try Self.note(20, by: NoteSigner(name: Self.log.name))).body
            ).status == 403)
        let stranger = try NoteSigner(name: "other.test/log")
        #expect(
            try await witness.add(AddCheckpoint(oldSize: 0, proof: [], note: try Self.note(5, by: stranger, origin: stranger.name)).body)
                .status == 404)

        // 200 for 20, then kill -9: the restarted witness holds 20, never 10.
        #expect(try await witness.add(AddCheckpoint(oldSize: 10, proof: Self.proof(10, 20), note: try Self.note(20)).body).status == 200)
        await witness.kill9()
        witness = try await Running.start(keyFile, dataDir: dataDir)
        let after = try await witness.add(AddCheckpoint(oldSize: 10, proof: Self.proof(10, 30), note: try Self.note(30)).body)
        #expect(after.status == 409 && after.body == "20\n", "the record written before the answer survived")
        #expect(try await witness.add(AddCheckpoint(oldSize: 20, proof: Self.proof(20, 30), note: try Self.note(30)).body).status == 200)
        await witness.kill9()
    }

    @Test("a replayed public checkpoint cosigned from memory: 1,000 replays, no sync, the state file untouched")
    func replays() async throws {
        let witness = try TestWitness("replay.test", log: Self.log.verifier)
        try await witness.start()
        let n20 = try Self.note(20)
        let text = try SignedNote.parse(n20).text
        #expect(try await Self.add(AddCheckpoint(oldSize: 0, proof: [], note: n20).body, port: witness.port).status == 200)
        let synced = witness.syncs
        #expect(synced > 0, "the first checkpoint is synced before it is cosigned")
        let stateFile = URL(fileURLWithPath: witness.directory).appendingPathComponent("witness-state.json")
        let bytes = try Data(contentsOf: stateFile)
        let modified = try FileManager.default.attributesOfItem(atPath: stateFile.path)[.modificationDate] as? Date

        let replay = AddCheckpoint(oldSize: 20, proof: [], note: n20).body
        var answered = 0
        for _ in 0..<1_000 {
            let answer = try await Self.add(replay, port: witness.port)
            guard answer.status == 200,
                try witness.cosigner.verifier.time(of: text, in: SignedNote.parse(n20 + answer.body).signatures) != nil
            else {
                Issue.record("replay \(answered + 1): \(answer.status) \(answer.body)")
                break
            }
            answered += 1
        }
        #expect(answered == 1_000, "every replay is cosigned")
        #expect(witness.syncs == synced, "a replay syncs nothing")
        #expect(try Data(contentsOf: stateFile) == bytes, "the state file is unchanged")
        #expect(
            try FileManager.default.attributesOfItem(atPath: stateFile.path)[.modificationDate] as? Date == modified, "and not rewritten")
        let record = try #require(try witness.records()[Self.log.name])
        #expect(record.size == 20 && record.root == Base64.encode(Self.root(20)))

        // Something new is written, and synced, again.
        #expect(
            try await Self.add(AddCheckpoint(oldSize: 20, proof: Self.proof(20, 30), note: try Self.note(30)).body, port: witness.port)
                .status == 200)
        #expect(witness.syncs > synced)
        #expect(try witness.size(Self.log.name) == 30)
        await witness.stop()
    }

    /// A second witness on the same data folder refuses to start, naming the folder; the first
    /// keeps answering, and once it is gone the folder can be used again.
    @Test("a second witness on a data folder refuses to start, naming it; once the first is gone it may start")
    func oneWitnessPerFolder() async throws {
        let (folder, keyFile, dataDir, _) = try Self.keyedFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try await Running.start(keyFile, dataDir: dataDir)
        #expect(try await first.add(AddCheckpoint(oldSize: 0, proof: [], note: try Self.note(10)).body).status == 200)

        let port = try EmbeddedPostgres.freePort()
        let output = folder.appendingPathComponent("second.log").path
        let pid = try ProcessRunner.launch(
            ledgerBinary(),
            ["witness", "serve", "--port", String(port), "--key", keyFile, "--log", Self.log.verifier.text, "--data-dir", dataDir],
            outputPath: output)
        var status: Int32?
        let deadline = ContinuousClock.now + .seconds(30)
        while status == nil, ContinuousClock.now < deadline {
            status = ProcessRunner.exitStatus(of: pid)
            if status == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        if status == nil {
            kill(pid, SIGKILL)
            _ = await ProcessRunner.exit(of: pid)
        }
        let exit = try #require(status, "the second witness still runs after 30 s")
        #expect(exit != 0)
        let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(said.contains("another witness is running on the data folder \(dataDir)"), "\(said)")
        #expect(await !Self.answersHealth(port: port), "it never listened")

        // The first still holds its record and answers.
        let stale = try await first.add(AddCheckpoint(oldSize: 0, proof: [], note: try Self.note(20)).body)
        #expect(stale.status == 409 && stale.body == "10\n")
        await first.kill9()
        // A process that is gone holds no lock: the folder is free again.
        let again = try await Running.start(keyFile, dataDir: dataDir)
        #expect(try await again.add(AddCheckpoint(oldSize: 10, proof: Self.proof(10, 20), note: try Self.note(20)).body).status == 200)
        await again.kill9()
    }
}
