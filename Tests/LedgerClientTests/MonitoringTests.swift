import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTestSupport
import Logging
import NIOCore
import NIOPosix
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The monitoring that ships (deploy/prometheus, deploy/grafana) against a real Prometheus
/// (Debian's `prometheus` package, which scripts/setup-system.sh installs) scraping a live ledger.
@Suite("Monitoring")
struct MonitoringTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy")
    static let rules = deploy.appendingPathComponent("prometheus/alerts.yml")
    static let dashboard = deploy.appendingPathComponent("grafana/participant-ledger.json")

    struct Missing: Error, CustomStringConvertible {
        var tool: String
        var description: String { "\(tool) is not installed: install Debian's prometheus package (scripts/setup-system.sh does)" }
    }

    static func tool(_ name: String) throws -> String {
        guard let path = ProcessRunner.which(name) else { throw Missing(tool: name) }
        return path
    }

    /// The expressions of the alert rules (`expr:` lines, folded `>` blocks included).
    static func ruleExpressions() throws -> [String] {
        let lines = try String(contentsOf: rules, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var expressions: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            index += 1
            guard line.hasPrefix("expr:") else { continue }
            var expression = String(line.dropFirst(5)).trimmingCharacters(in: .whitespaces)
            if expression == ">" {
                expression = ""
                while index < lines.count, lines[index].hasPrefix("            ") {
                    expression += " " + lines[index].trimmingCharacters(in: .whitespaces)
                    index += 1
                }
            }
            expressions.append(expression.trimmingCharacters(in: .whitespaces))
        }
        return expressions
    }

    static func dashboardExpressions() throws -> [String] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: dashboard)) as? [String: Any]
        let panels = json?["panels"] as? [[String: Any]] ?? []
        return panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
    }

    /// The metric names an expression reads (the ledger's, Hummingbird's).
    static func metricNames(_ expression: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "\\b(ledger|hb|http_server)_[a-z_]+\\b")
        let range = NSRange(expression.startIndex..., in: expression)
        return Set(
            pattern.matches(in: expression, range: range).compactMap { Range($0.range, in: expression).map { String(expression[$0]) } })
    }

    @Test("promtool accepts the alert rules")
    func promtoolChecksRules() async throws {
        let output = try await ProcessRunner.check(try Self.tool("promtool"), ["check", "rules", Self.rules.path])
        #expect(output.contains("SUCCESS: \(try Self.ruleExpressions().count) rules found"), "\(output)")
    }

    @Test(
        "a real Prometheus scraping a running ledger evaluates every alert rule and every dashboard query without error, and every metric they read is scraped"
    )
    func prometheusEvaluates() async throws {
        let prometheus = try Self.tool("prometheus")
        let expressions = try Self.ruleExpressions() + Self.dashboardExpressions()
        let names = expressions.reduce(into: Set<String>()) { $0.formUnion(Self.metricNames($1)) }
        #expect(names.count >= 10, "\(names.sorted())")
        // A witness, so the witness client's series exist too.
        let signer = try NoteSigner(name: "monitoring.test/ledger")
        let witness = try TestWitness("w.test", log: signer.verifier)
        try await witness.start()
        defer { Task { await witness.stop() } }
        let policy = try WitnessPolicy("log \(signer.verifier.text)\n\(witness.policyLine("W"))\nquorum W\n")
        try await LiveServer.run(signer: signer, witnesses: policy) { server in
            // Activity, so that every series exists: an append, a verdict, a checkpoint, requests.
            let devin = server.client("devin")
            let prepared = try await devin.prepareCollaboration(
                localIdentifier: "doc", title: "Doc", initiator: Initiator(handle: "d@example.com"))
            let person = SimulatedPerson(collaborationId: prepared.identifier, devices: 1)
            _ = try await devin.updateParticipants(added: [person.rootHashData], in: prepared.identifier)
            _ = try await verify(server.client("alice"), person, in: prepared.identifier)
            let logger = Logger(label: "monitoring-test")
            // As every `ledger` role runs beside its services: the pool's metrics.
            let pool = DatabasePoolMetrics(
                client: server.db, applicationName: "monitoring-test", maxConnections: 20, interval: .seconds(1), logger: logger)
            let poolTask = Task { try await pool.run() }
            defer { poolTask.cancel() }

            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-prometheus-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let port = try await Self.freePort()
            let config = """
                global: {scrape_interval: 1s, evaluation_interval: 1s}
                rule_files: ["\(Self.rules.path)"]
                scrape_configs:
                  - job_name: ledger
                    static_configs: [{targets: ["\(server.baseURL.host ?? "127.0.0.1"):\(server.baseURL.port ?? 0)"]}]
                """
            try config.write(to: folder.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
            let pid = try ProcessRunner.launch(
                prometheus,
                [
                    "--config.file=\(folder.appendingPathComponent("prometheus.yml").path)",
                    "--storage.tsdb.path=\(folder.appendingPathComponent("data").path)", "--web.listen-address=127.0.0.1:\(port)",
                ], outputPath: folder.appendingPathComponent("prometheus.log").path)
            defer {
                kill(pid, SIGKILL)
                while ProcessRunner.exitStatus(of: pid) == nil { usleep(10_000) }
            }
            let api = URL(string: "http://127.0.0.1:\(port)/api/v1/")!

            try await waitUntil(
                timeout: .seconds(60), interval: .milliseconds(250), "Prometheus scrapes every metric the rules and the dashboard read"
            ) {
                var missing: [String] = []
                for name in names where try await Self.query(api, "count({__name__=\"\(name)\"})").isEmpty { missing.append(name) }
                return missing.isEmpty
            }
            try await waitUntil(timeout: .seconds(30), interval: .milliseconds(250), "every alert rule evaluated") {
                let rules = try await Self.rules(api)
                return rules.count == (try Self.ruleExpressions().count) && rules.allSatisfy { $0.evaluated }
            }
            for rule in try await Self.rules(api) {
                #expect(rule.health == "ok", "\(rule.name): \(rule.lastError ?? "")")
            }
            for expression in try Self.dashboardExpressions() {
                let (status, error) = try await Self.evaluate(api, expression)
                #expect(status == "success", "\(expression): \(error ?? "")")
            }
        }
    }

    struct Rule {
        var name: String
        var health: String
        var lastError: String?
        var evaluated: Bool
    }

    static func get(_ api: URL, _ path: String, _ query: [URLQueryItem] = []) async throws -> [String: Any] {
        var components = URLComponents(url: api.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query }
        let (data, _) = try await TestHTTP.data(from: components.url!)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    static func evaluate(_ api: URL, _ expression: String) async throws -> (status: String?, error: String?) {
        let answer = try await get(api, "query", [URLQueryItem(name: "query", value: expression)])
        return (answer["status"] as? String, answer["error"] as? String)
    }

    /// The result vector of an instant query; empty when the query fails.
    static func query(_ api: URL, _ expression: String) async throws -> [Any] {
        // Not up yet, or refusing: nothing.
        let answer = (try? await get(api, "query", [URLQueryItem(name: "query", value: expression)])) ?? [:]
        return ((answer["data"] as? [String: Any])?["result"] as? [Any]) ?? []
    }

    static func rules(_ api: URL) async throws -> [Rule] {
        let answer = (try? await get(api, "rules")) ?? [:]
        let groups = ((answer["data"] as? [String: Any])?["groups"] as? [[String: Any]]) ?? []
        return groups.flatMap { ($0["rules"] as? [[String: Any]]) ?? [] }.map { rule in
            Rule(
                name: rule["name"] as? String ?? "?", health: rule["health"] as? String ?? "?", lastError: rule["lastError"] as? String,
                evaluated: (rule["lastEvaluation"] as? String).map { !$0.hasPrefix("0001-") } ?? false)
        }
    }

    /// A loopback port nothing listens on (bound, read, released).
    static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }
}
