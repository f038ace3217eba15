import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerPostgres
import LedgerTestSupport
import LedgerTokens
import Synchronization
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// SPEC "Backups and recovery", the single-node default: `ledger serve` on its embedded cluster,
/// `ledger backup` streaming while writes go on, then the server and its PostgreSQL killed and
/// the data folder wiped; `ledger restore` and `ledger serve` again. Every checkpoint seen before
/// the loss is extended by the restored log, every write a seen checkpoint covers is there. A
/// backup is not a key ring: without recipients no secret is in the folder, with one they are
/// sealed, and the restore opens them with its identity and overwrites nothing.
@Suite("Backups")
struct BackupTests {
    /// Where the backed-up ledger keeps its signing key and checkpoint file (outside its data
    /// folder): the restore must lay them there again, told only by the backup.
    static func keyFile(_ folder: URL) -> URL { folder.appendingPathComponent("keys/log.key") }
    static func checkpointFile(_ folder: URL) -> URL { folder.appendingPathComponent("checkpoint/published-checkpoint") }

    /// One `ledger` process, its output in files of `folder`.
    struct Launched {
        let pid: pid_t
        let out: String
        let err: String
    }

    static func launch(_ arguments: [String], in folder: URL, name: String) throws -> Launched {
        let (out, err) = (folder.appendingPathComponent("\(name).out").path, folder.appendingPathComponent("\(name).err").path)
        // No index recorder: it appends records of its own, so the test's last write would not be
        // the last event before the backup stops (the bound it checks the gate against).
        let environment = ConfigurationTests.environment([
            "LEDGER_LOG_FORMAT": "json", "LEDGER_JWT_SECRET": ConfigurationTests.secret,
            "LEDGER_SIGNING_KEY_FILE": keyFile(folder).path, "LEDGER_CHECKPOINT_FILE": checkpointFile(folder).path,
            Setting.index.variable: "no",
        ])
        let pid = try ProcessRunner.launch(ledgerBinary(), arguments, environment: environment, outputPath: out, errorPath: err)
        return Launched(pid: pid, out: out, err: err)
    }

    /// `ledger serve` on `data`, once it answers /ready.
    static func serve(_ data: URL, in folder: URL, name: String) async throws -> (Launched, URL) {
        let server = try launch(["serve", "--data-dir", data.path, "--port", "0"], in: folder, name: name)
        try await waitUntil(timeout: .seconds(120), "\(name) logs where it listens") {
            ConfigurationTests.listening(server.err) != nil || ProcessRunner.exitStatus(of: server.pid) != nil
        }
        let url = try #require(
            ConfigurationTests.listening(server.err), "\(name) stopped: \(ConfigurationTests.lines(server.err).suffix(5))")
        try await waitUntil(timeout: .seconds(120), "\(name) ready") { await ConfigurationTests.status(url, "ready") == 200 }
        return (server, url)
    }

    static func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// The published checkpoint's note, nil before the first.
    static func published(_ url: URL) async -> String? {
        guard let (data, response) = try? await TestHTTP.data(from: url.appendingPathComponent("tlog/checkpoint")),
            (response as? HTTPURLResponse)?.statusCode == 200
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func size(_ note: String) -> Int64 { Int64(note.split(separator: "\n")[1]) ?? 0 }

    /// The secrets (each file's text) found in any file under `folder`, by a byte search.
    static func secretsFound(_ secrets: [URL], in folder: URL) throws -> [String] {
        let needles = secrets.compactMap { file in
            (try? String(contentsOf: file, encoding: .utf8)).map {
                (file.lastPathComponent, Data($0.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
            }
        }
        #expect(needles.count == secrets.count && needles.allSatisfy { $0.1.count >= 16 }, "every secret is there to search for")
        var found: Set<String> = []
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])!
        for case let file as URL in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            guard let bytes = FileManager.default.contents(atPath: file.path) else { continue }
            for (name, needle) in needles where bytes.range(of: needle) != nil { found.insert("\(name) in \(file.path)") }
        }
        return found.sorted()
    }

    /// `age-keygen -o FILE`: an identity file; returns its recipient (`age1…`).
    static func ageKey(_ file: URL) async throws -> String {
        let made = try await ProcessRunner.run(
            try #require(ProcessRunner.which("age-keygen"), "age-keygen (Debian's age)"), ["-o", file.path])
        try #require(made.status == 0, "\(made.output)")
        let text = try String(contentsOf: file, encoding: .utf8)
        return try #require(text.split(separator: "\n").first { $0.hasPrefix("# public key: ") }).dropFirst("# public key: ".count)
            .description
    }

    /// `pg_dump` of the embedded cluster running in `data`, as its owner.
    static func dump(_ data: URL) async throws -> String {
        let port = try #require(Self.text(data.appendingPathComponent("pg/postmaster.pid").path).split(separator: "\n").dropFirst(3).first)
        let password = Self.text(data.appendingPathComponent("pg-password").path).trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try await ProcessRunner.run(
            try EmbeddedPostgres.binaries() + "/pg_dump", ["-h", "127.0.0.1", "-p", String(port), "-U", "ledger", "ledger"],
            environment: ConfigurationTests.environment(["PGPASSWORD": password]))
        try #require(result.status == 0, "\(result.output)")
        return result.output
    }

    /// ledger backup while writes go on; kill -9 of the server and its PostgreSQL, the data folder
    /// wiped; ledger restore and serve: every checkpoint seen before extended, every write they
    /// cover present, the erasure kept, the log verifies.
    @Test("ledger backup under writes, kill -9, the folder wiped, restore and serve: nothing published lost")
    func embeddedBackupAndRestore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-backup-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chmod(folder.path, 0o755)  // crossed by the system user that runs PostgreSQL as root
        defer { try? FileManager.default.removeItem(at: folder) }
        let (data, backup) = (folder.appendingPathComponent("data"), folder.appendingPathComponent("backup"))
        for file in [Self.keyFile(folder), Self.checkpointFile(folder)] {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        let keygen = try await ProcessRunner.run(ledgerBinary(), ["log", "keygen", "--origin", "127.0.0.1/ledger"])
        try #require(keygen.status == 0)
        // stdout has the key; stderr (merged here) the verifier key, a line of its own.
        let signingKey = try #require(keygen.output.split(separator: "\n").first { $0.hasPrefix("PRIVATE+KEY+") })
        try (signingKey + "\n").write(to: Self.keyFile(folder), atomically: true, encoding: .utf8)
        var (server, url) = try await Self.serve(data, in: folder, name: "serve")
        var live: [pid_t] = [server.pid]
        // A JWT secret file as `ledger serve` makes without LEDGER_JWT_SECRET: a backup must not carry it in the clear.
        try "backup-test-jwt-secret-\(UUID())".write(to: data.appendingPathComponent("jwt-secret"), atomically: true, encoding: .utf8)
        let secrets = ["pg-password", "app-password", "jwt-secret"].map { data.appendingPathComponent($0) } + [Self.keyFile(folder)]
        defer {
            for pid in live {
                kill(pid, SIGKILL)
                _ = ProcessRunner.exitStatus(of: pid)
            }
        }

        let authority = try await TokenAuthority(secret: ConfigurationTests.secret)
        let client = { (base: URL) in
            LedgerClient(baseURL: base, transport: HTTPClientTransport()) { try await authority.issue(account: "backup-owner") }
        }
        var acknowledged: [(id: String, position: Int64)] = []
        func write(_ count: Int, to base: URL) async throws {
            for n in 0..<count {
                let started = try await client(base).prepareCollaboration(
                    localIdentifier: "doc-\(acknowledged.count)-\(n)", title: "Backed up", initiator: Initiator(handle: "owner@example.com")
                )
                acknowledged.append((started.identifier, started.position))
            }
        }
        try await write(20, to: url)

        // The backup attaches to the running cluster: a base backup, then the WAL streamed.
        let streaming = try Self.launch(["backup", "--to", backup.path, "--data-dir", data.path], in: folder, name: "backup")
        live.append(streaming.pid)
        try await waitUntil(timeout: .seconds(120), "the backup streams") {
            Self.text(streaming.out).contains("streaming WAL") || ProcessRunner.exitStatus(of: streaming.pid) != nil
        }
        #expect(Self.text(streaming.out).contains("streaming WAL"), "\(Self.text(streaming.out)) \(Self.text(streaming.err))")

        // Writes while it streams; every checkpoint published meanwhile is kept.
        var seen: [String] = []
        for _ in 0..<4 {
            try await write(15, to: url)
            if let note = await Self.published(url), seen.last != note { seen.append(note) }
        }

        // An erasure while the backup streams: it stays made after the restore.
        let erased = LedgerClient(baseURL: url, transport: HTTPClientTransport()) { try await authority.issue(account: "backup-erased") }
        let secret = "Backup secret title \(UUID())"
        let erasedStart = try await erased.prepareCollaboration(
            localIdentifier: "erased-doc", title: secret, initiator: Initiator(handle: "erased@example.com"))
        let officer = LedgerClient(baseURL: url, transport: HTTPClientTransport()) {
            try await authority.issue(account: "backup-officer", roles: ["privacy"])
        }
        let erasure = try await officer.erasePersonalData(account: "backup-erased", reason: "TICKET-38")

        // The gate counts the backup's slot: stopped, it holds checkpoints back from what it has
        // not flushed; resumed (the same folder), they cover everything again.
        let flushed = try #require(erasure.position)  // the last event before the backup stops
        let before = url
        try await waitUntil(timeout: .seconds(30), "a checkpoint covering the writes so far") {
            (await Self.published(before)).map { Self.size($0) >= flushed } ?? false
        }
        kill(streaming.pid, SIGTERM)
        #expect(await ProcessRunner.exit(of: streaming.pid) == 0, "\(Self.text(streaming.err))")
        live.removeAll { $0 == streaming.pid }
        // Made without recipients: no secret in the folder, and the backup said where they are.
        #expect(try Self.secretsFound(secrets, in: backup) == [], "a backup without recipients holds key material")
        #expect(try Self.secretsFound(secrets, in: data).count == 3, "the search finds a secret where it is")
        #expect(Self.text(streaming.out).contains("no secret is in") && Self.text(streaming.out).contains(Self.keyFile(folder).path))
        #expect(
            FileManager.default.fileExists(atPath: backup.appendingPathComponent("published-checkpoint").path),
            "the checkpoint is kept in the clear")
        try await write(5, to: url)
        let watchEnd = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < watchEnd {  // a bounded watch for what must not happen
            let size = (await Self.published(url)).map(Self.size) ?? 0
            #expect(size <= flushed, "a checkpoint of \(size) covers events the stopped backup never flushed (\(flushed))")
            try await Task.sleep(for: .milliseconds(100))
        }
        // Resumed with a recipient: the secrets sealed with age.
        let identity = folder.appendingPathComponent("backup-identity.txt")
        let recipient = try await Self.ageKey(identity)
        let resumed = try Self.launch(
            ["backup", "--to", backup.path, "--data-dir", data.path, "--recipient", recipient], in: folder, name: "backup-resumed")
        live.append(resumed.pid)
        try await waitUntil(timeout: .seconds(60), "the backup resumes") { Self.text(resumed.out).contains("streaming WAL") }
        #expect(Self.text(resumed.out).contains("resuming the WAL stream"), "\(Self.text(resumed.out))")
        let last = try #require(acknowledged.last).position
        let latest = Mutex<String?>(nil)
        try await waitUntil(timeout: .seconds(30), "a checkpoint covering every write (the archive flushed them)") {
            guard let note = await Self.published(before) else { return false }
            latest.withLock { $0 = note }
            return Self.size(note) >= last
        }
        let final = try #require(latest.withLock { $0 })
        if seen.last != final { seen.append(final) }
        let covered = Self.size(final)
        try await write(5, to: url)  // acknowledged, maybe past every checkpoint

        // The loss: the server and its PostgreSQL killed, the data folder gone.
        let postmaster = try #require(
            pid_t(Self.text(data.appendingPathComponent("pg/postmaster.pid").path).split(separator: "\n").first ?? ""))
        kill(server.pid, SIGKILL)
        kill(postmaster, SIGKILL)
        _ = await ProcessRunner.exit(of: server.pid)
        kill(resumed.pid, SIGTERM)
        #expect(await ProcessRunner.exit(of: resumed.pid) == 0, "\(Self.text(resumed.err))")
        live = []
        try await waitUntil(timeout: .seconds(30), "PostgreSQL's processes gone") { kill(postmaster, 0) != 0 }
        #expect(try Self.secretsFound(secrets, in: backup) == [], "sealed secrets are not in the clear")
        #expect(FileManager.default.fileExists(atPath: backup.appendingPathComponent("secrets/log-signing-key.age").path))
        try FileManager.default.removeItem(at: data)
        try FileManager.default.removeItem(at: Self.keyFile(folder))
        try FileManager.default.removeItem(at: Self.checkpointFile(folder))

        // A wrong identity opens nothing and lays nothing.
        let stranger = folder.appendingPathComponent("stranger.txt")
        _ = try await Self.ageKey(stranger)
        let refused = try await ProcessRunner.run(
            ledgerBinary(), ["restore", "--from", backup.path, "--data-dir", data.path, "--identity", stranger.path],
            environment: ConfigurationTests.environment([:]))
        #expect(refused.status != 0 && refused.output.contains("could not open"), "\(refused.output)")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("pg").path))
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("pg-password").path))
        // A file already in the restore's way is kept (here a JWT secret someone put back).
        let existing = "existing-jwt-secret-\(UUID())"
        try existing.write(to: data.appendingPathComponent("jwt-secret"), atomically: true, encoding: .utf8)

        // Restored with the settings the backed-up ledger had (LEDGER_SIGNING_KEY_FILE,
        // LEDGER_CHECKPOINT_FILE): the key and the checkpoint laid there, as backup.json says they were.
        let restore = try await ProcessRunner.run(
            ledgerBinary(), ["restore", "--from", backup.path, "--data-dir", data.path, "--identity", identity.path],
            environment: ConfigurationTests.environment([
                "LEDGER_SIGNING_KEY_FILE": Self.keyFile(folder).path, "LEDGER_CHECKPOINT_FILE": Self.checkpointFile(folder).path,
            ]))
        #expect(restore.status == 0 && restore.output.contains("WAL segments laid out"), "\(restore.output)")
        #expect(Self.text(data.appendingPathComponent("jwt-secret").path) == existing, "the restore overwrote a file")
        #expect(restore.output.contains("kept \(data.appendingPathComponent("jwt-secret").path)"), "\(restore.output)")
        #expect(FileManager.default.fileExists(atPath: Self.keyFile(folder).path), "\(restore.output)")
        #expect(FileManager.default.fileExists(atPath: Self.checkpointFile(folder).path), "\(restore.output)")
        #expect(!restore.output.contains("set its setting"), "\(restore.output)")
        // Without those settings the folder does not choose where files are written: into the data folder, saying where they were.
        let elsewhere = folder.appendingPathComponent("elsewhere")
        let secretsOnly = try await ProcessRunner.run(
            ledgerBinary(),
            ["restore", "--secrets-only", "--from", backup.path, "--data-dir", elsewhere.path, "--identity", identity.path],
            environment: ConfigurationTests.environment([:]))
        #expect(
            secretsOnly.status == 0 && secretsOnly.output.contains("kept log-signing-key at \(Self.keyFile(folder).path)"),
            "\(secretsOnly.output)")
        #expect(Self.text(elsewhere.appendingPathComponent("log-signing-key").path) == Self.text(Self.keyFile(folder).path))
        (server, url) = try await Self.serve(data, in: folder, name: "restored")
        live = [server.pid]

        // Every write a seen checkpoint covers is there; the restored log extends every checkpoint seen.
        let restored = client(url)
        let isPresent: @Sendable ((id: String, position: Int64)) async -> Bool = {
            (try? await restored.collaboration($0.id, minPosition: min($0.position, covered))) != nil
        }
        let present = await acknowledged.asyncCount(isPresent)
        let coveredWrites = acknowledged.filter { $0.position <= covered }
        let presentCovered = await coveredWrites.asyncCount(isPresent)
        #expect(presentCovered == coveredWrites.count, "writes a published checkpoint covered are lost")
        let auditor = LedgerClient(baseURL: url, transport: HTTPClientTransport()) {
            try await authority.issue(account: "backup-auditor", roles: ["auditor"])
        }
        let afterErasure = try await auditor.collaboration(erasedStart.identifier, minPosition: erasedStart.position)
        #expect(afterErasure.title == nil && afterErasure.owner.hasPrefix("erased:"), "the erasure is undone: \(afterErasure)")
        let dump = try await Self.dump(data)
        #expect(
            dump.contains("CREATE TABLE") && !dump.contains(secret) && !dump.contains("backup-erased"),
            "the restored database holds erased values")
        print(
            "backup drill (embedded): \(acknowledged.count) acknowledged, \(present) present after the restore, \(coveredWrites.count) covered by the last checkpoint seen (\(covered)), \(seen.count) checkpoints seen"
        )
        let key = try String(contentsOf: Self.keyFile(folder), encoding: .utf8)
        let verifier = try NoteSigner(key).verifier.text
        for (n, note) in seen.enumerated() {
            let saved = folder.appendingPathComponent("seen-\(n).txt")
            try note.write(to: saved, atomically: true, encoding: .utf8)
            let after = url
            try await waitUntil(timeout: .seconds(60), "a checkpoint of the restored log at least \(Self.size(note))") {
                (await Self.published(after)).map { Self.size($0) >= Self.size(note) } ?? false
            }
            let verify = try await ProcessRunner.run(
                ledgerBinary(), ["log", "verify", "--url", url.absoluteString, "--checkpoint", saved.path, "--key", verifier],
                environment: ConfigurationTests.environment([:]))
            #expect(
                verify.status == 0 && verify.output.contains("log verify: OK"), "checkpoint \(n) (\(Self.size(note))): \(verify.output)")
        }
    }
}

extension Array where Element: Sendable {
    /// How many elements `condition` holds for, asked one at a time.
    func asyncCount(_ condition: (Element) async throws -> Bool) async rethrows -> Int {
        var count = 0
        for element in self where try await condition(element) { count += 1 }
        return count
    }
}
