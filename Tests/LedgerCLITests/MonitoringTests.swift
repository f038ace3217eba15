import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTestSupport
import Logging
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The monitoring that ships (deploy/prometheus, deploy/grafana) against a real Prometheus
/// (Debian's `prometheus` package, which scripts/setup-system.sh installs) scraping a live ledger.
@Suite("Monitoring")
struct MonitoringTests {
    static let rules = TestPrometheus.rules
    static let dashboard = Repository.root.appendingPathComponent("deploy/grafana/participant-ledger.json")

    /// The expressions of the alert rules (`expr:` lines, folded `>` blocks included).
    static func ruleExpressions() throws -> [String] {
        let lines = try String(contentsOf: rules, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var expressions: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            index += 1
            guard line.hasPrefix("expr:") else { continue }
            let indent = String(lines[index - 1].prefix { $0 == " " }) + "  "
            var expression = String(line.dropFirst(5)).trimmingCharacters(in: .whitespaces)
            if expression == ">" {
                expression = ""
                // The folded lines: those indented deeper than `expr:`.
                while index < lines.count, lines[index].hasPrefix(indent) {
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
        let output = try await ProcessRunner.check(try TestPrometheus.tool("promtool"), ["check", "rules", Self.rules.path])
        #expect(output.contains("SUCCESS: \(try Self.ruleExpressions().count) rules found"), "\(output)")
    }

    @Test("a real Prometheus evaluates every alert rule and dashboard query; every metric they read is scraped")
    func prometheusEvaluates() async throws {
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

            try await TestPrometheus.run(scraping: server.baseURL) { prometheus in
                let unscraped = Mutex<[String]>([])
                do {
                    try await waitUntil(
                        timeout: .seconds(90), interval: .milliseconds(250),
                        "Prometheus scrapes every metric the rules and the dashboard read"
                    ) {
                        var missing: [String] = []
                        for name in names where try await prometheus.query("count({__name__=\"\(name)\"})").isEmpty { missing.append(name) }
                        unscraped.withLock { $0 = missing }
                        return missing.isEmpty
                    }
                } catch {
                    Issue.record("never scraped: \(unscraped.withLock { $0 })")
                    throw error
                }
                try await waitUntil(timeout: .seconds(30), interval: .milliseconds(250), "every alert rule evaluated") {
                    let rules = try await prometheus.rules()
                    return rules.count == (try Self.ruleExpressions().count) && rules.allSatisfy { $0.evaluated }
                }
                for rule in try await prometheus.rules() {
                    #expect(rule.health == "ok", "\(rule.name): \(rule.lastError ?? "")")
                }
                for expression in try Self.dashboardExpressions() {
                    let (status, error) = try await prometheus.evaluate(expression)
                    #expect(status == "success", "\(expression): \(error ?? "")")
                }
                // On one database the figures name no shard (`ShardMetrics` records an empty one,
                // which Prometheus drops): the series are those a single database always had.
                // (Waited on: a scrape slower than its 1 s interval under load leaves the series stale
                // for a moment.)
                for name in ["ledger_expiry_overdue", "ledger_projection_position", "ledger_checkpoint_size"] {
                    try await waitUntil(timeout: .seconds(30), interval: .milliseconds(250), "\(name) with no shard scraped") {
                        try await prometheus.query(name).contains { $0.labels["shard"] == nil }
                    }
                }
            }
        }
    }
}
