import Foundation
import LedgerConfiguration
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Settings as an operator meets them: the real `ledger` binary, started with bad values, and
/// `ledger serve` logging JSON and draining on SIGTERM.
@Suite("Configuration")
struct ConfigurationTests {
    /// The environment of a role started by a test: no LEDGER_ setting of the test process.
    static func environment(_ settings: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }.merging(settings) { $1 }
    }

    static let secret = String(repeating: "k", count: 40)
    static let unreachableDatabase = "postgres://ledger@127.0.0.1:1/ledger?sslmode=disable"

    /// A value of the kind that must be refused.
    static func malformed(_ kind: Setting.Kind) -> String? {
        switch kind {
        case .text: nil
        case .count: "12x"
        case .seconds: "soon"
        case .yesNo: "maybe"
        case .choice: "loudly"
        case .httpURL: "ftp://ledger.example.com"
        case .databaseURL: "mysql://ledger@db/ledger"
        case .secret: "short"
        case .character: ", "
        }
    }

    @Test("the configuration table in docs/OPERATIONS.md is exactly `ledger settings` (LedgerSettings.all)")
    func documentedTable() throws {
        let operations = try String(contentsOf: Repository.root.appendingPathComponent("docs/OPERATIONS.md"), encoding: .utf8)
        #expect(operations.contains(LedgerSettings.markdownTable), "regenerate docs/OPERATIONS.md's table with `ledger settings`")
    }

    @Test("every malformed setting stops `ledger api` at start, naming the variable and (unless secret) value")
    func malformedSettings() async throws {
        let binary = ledgerBinary()
        for setting in LedgerSettings.all {
            guard let value = Self.malformed(setting.kind) else { continue }
            var settings = ["LEDGER_JWT_SECRET": Self.secret]
            settings[setting.variable] = value
            let environment = Self.environment(settings)
            let result = try await withDeadline(.seconds(60), "ledger api with \(setting.variable)") {
                try await ProcessRunner.run(binary, ["api", "--database-url", Self.unreachableDatabase], environment: environment)
            }
            #expect(result.status != 0, "\(setting.variable)=\(value) was accepted")
            #expect(result.output.contains("refusing to start") && result.output.contains(setting.variable), "\(result.output)")
            switch setting.kind {
            case .secret, .databaseURL: #expect(!result.output.contains(value), "a secret is not repeated")
            default: #expect(result.output.contains("'\(value)'"), "\(result.output)")
            }
        }
    }

    /// `ledger api` with a database URL refuses to start without the deployment's token key;
    /// `project`, `verifier` and `deliver`, which check no token, do not ask for one.
    @Test("`ledger api` with a database URL needs the token key; `project`, `verifier`, `deliver` do not")
    func tokenKeyRequired() async throws {
        let binary = ledgerBinary()
        let api = try await withDeadline(.seconds(60), "ledger api") {
            try await ProcessRunner.run(binary, ["api", "--database-url", Self.unreachableDatabase], environment: Self.environment([:]))
        }
        #expect(api.status != 0 && api.output.contains("LEDGER_JWT_SECRET"), "api: \(api.output)")
        // The others go on to the database (unreachable here: they try it again and again).
        for role in ["project", "verifier", "deliver"] {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(role)-\(UUID().uuidString.prefix(8)).log")
            defer { try? FileManager.default.removeItem(at: output) }
            let pid = try ProcessRunner.launch(
                binary, [role, "--database-url", Self.unreachableDatabase], environment: Self.environment([:]), outputPath: output.path)
            defer {
                kill(pid, SIGKILL)
                _ = ProcessRunner.exitStatus(of: pid)
            }
            let text: @Sendable () -> String = { (try? String(contentsOfFile: output.path, encoding: .utf8)) ?? "" }
            try await waitUntil(timeout: .seconds(60), "ledger \(role) trying the database, or stopping") {
                text().contains("Connection refused") || ProcessRunner.exitStatus(of: pid) != nil
            }
            #expect(!text().contains("LEDGER_JWT_SECRET") && text().contains("Connection refused"), "\(role): \(text().suffix(400))")
        }
    }

    @Test("LEDGER_SHARD_CLUSTER stops every role but `serve` at start, not run on the cluster's own database")
    func shardClusterServeOnly() async throws {
        let binary = ledgerBinary()
        for role in ["api", "project", "verifier", "deliver"] {
            let result = try await withDeadline(.seconds(60), "ledger \(role) with LEDGER_SHARD_CLUSTER") {
                try await ProcessRunner.run(
                    binary, [role, "--database-url", Self.unreachableDatabase],
                    environment: Self.environment(["LEDGER_JWT_SECRET": Self.secret, "LEDGER_SHARD_CLUSTER": "ledger_shards"]))
            }
            #expect(
                result.status != 0 && result.output.contains("LEDGER_SHARD_CLUSTER is for `ledger serve` alone"),
                "\(role): \(result.output)")
        }
    }

    /// `ledger serve` with LEDGER_LOG_FORMAT=json writes one JSON object per stderr line, a
    /// request's with its id; on SIGTERM /ready answers 503 while /health is still served.
    @Test("`ledger serve` with JSON logs: one object per stderr line; on SIGTERM /ready 503, /health served")
    func jsonLogsAndDrain() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-json-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (stdout, stderr) = (folder.appendingPathComponent("out").path, folder.appendingPathComponent("err").path)
        let environment = Self.environment([
            "LEDGER_LOG_FORMAT": "json", "LEDGER_JWT_SECRET": Self.secret, "LEDGER_SHUTDOWN_DRAIN": "3",
        ])
        let pid = try ProcessRunner.launch(
            ledgerBinary(), ["serve", "--data-dir", folder.appendingPathComponent("data").path, "--port", "0"],
            environment: environment, outputPath: stdout, errorPath: stderr)
        let exited = Mutex(false)
        defer {
            if !exited.withLock({ $0 }) {
                kill(pid, SIGKILL)
                _ = ProcessRunner.exitStatus(of: pid)
            }
        }

        try await waitUntil(timeout: .seconds(120), "the server logs where it listens") {
            Self.listening(stderr) != nil || ProcessRunner.exitStatus(of: pid).map { _ in exited.withLock { $0 = true } } != nil
        }
        let url = try #require(Self.listening(stderr), "the server stopped: \(Self.lines(stderr))")
        try await waitUntil(timeout: .seconds(60), "ready") { await Self.status(url, "ready") == 200 }
        #expect(await Self.status(url, "health", id: "json-log-test-1") == 200)

        kill(pid, SIGTERM)
        try await waitUntil(timeout: .seconds(10), "/ready answers 503 once shutdown began") { await Self.status(url, "ready") == 503 }
        #expect(await Self.status(url, "health") == 200, "still served while draining")
        // Then it stops (its embedded PostgreSQL with it).
        try await waitUntil(timeout: .seconds(60), "the server exited") {
            ProcessRunner.exitStatus(of: pid).map { _ in exited.withLock { $0 = true } } != nil
        }

        let logged = Self.lines(stderr)
        #expect(!logged.isEmpty && logged.allSatisfy { $0["unparsed"] == nil }, "\(logged.filter { $0["unparsed"] != nil })")
        #expect(logged.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
        #expect(
            logged.contains {
                $0["hb.request.id"] as? String == PersonalData.clientTextDigest("json-log-test-1") && $0["status"] as? String == "200"
            })
    }

    /// The server's stderr, each line parsed as JSON (or kept as `unparsed`).
    static func lines(_ path: String) -> [[String: any Sendable]] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: any Sendable]) ?? ["unparsed": String(line)]
        }
    }

    /// Where the server listens, once it has logged it.
    static func listening(_ path: String) -> URL? {
        lines(path).compactMap { $0["url"] as? String }.first.flatMap(URL.init(string:))
    }

    static func status(_ base: URL, _ path: String, id: String? = nil) async -> Int {
        var request = URLRequest(url: base.appendingPathComponent(path), timeoutInterval: 5)
        if let id { request.setValue(id, forHTTPHeaderField: "X-Request-Id") }
        return ((try? await TestHTTP.data(for: request))?.1 as? HTTPURLResponse)?.statusCode ?? 0
    }
}
