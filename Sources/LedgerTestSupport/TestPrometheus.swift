import Foundation
import LedgerPostgres
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real Prometheus (Debian's `prometheus` package, which scripts/setup-system.sh installs)
/// scraping one ledger every second with the shipped alert rules (deploy/prometheus/alerts.yml)
/// evaluated every second, in a folder of its own, for as long as `run`'s body runs.
public struct TestPrometheus: Sendable {
    public static let rules = Repository.root.appendingPathComponent("deploy/prometheus/alerts.yml")

    public struct Missing: Error, CustomStringConvertible {
        public var tool: String
        public var description: String { "\(tool) is not installed: install Debian's prometheus package (scripts/setup-system.sh does)" }
    }

    /// An alert rule as Prometheus evaluated it last, with its active alerts' labels.
    public struct Rule: Sendable {
        public var name: String
        public var health: String
        public var lastError: String?
        public var evaluated: Bool
        public var alerts: [[String: String]]
    }

    /// Its HTTP API, `http://127.0.0.1:port/api/v1/`.
    public let api: URL

    public static func tool(_ name: String) throws -> String {
        guard let path = ProcessRunner.which(name) else { throw Missing(tool: name) }
        return path
    }

    /// `body` while Prometheus scrapes `target` (its `/metrics`).
    public static func run(scraping target: URL, _ body: @Sendable (TestPrometheus) async throws -> Void) async throws {
        let prometheus = try tool("prometheus")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-prometheus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = try await freePort()
        let config = """
            global: {scrape_interval: 1s, evaluation_interval: 1s}
            rule_files: ["\(rules.path)"]
            scrape_configs:
              - job_name: ledger
                static_configs: [{targets: ["\(target.host ?? "127.0.0.1"):\(target.port ?? 0)"]}]
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
        try await body(TestPrometheus(api: URL(string: "http://127.0.0.1:\(port)/api/v1/")!))
    }

    func get(_ path: String, _ query: [URLQueryItem] = []) async throws -> [String: Any] {
        var components = URLComponents(url: api.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query }
        let (data, _) = try await TestHTTP.data(from: components.url!)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// An instant query's status and error.
    public func evaluate(_ expression: String) async throws -> (status: String?, error: String?) {
        let answer = try await get("query", [URLQueryItem(name: "query", value: expression)])
        return (answer["status"] as? String, answer["error"] as? String)
    }

    /// The result vector of an instant query, each sample's labels and value; empty when the
    /// query fails (Prometheus not up yet, or refusing).
    public func query(_ expression: String) async throws -> [(labels: [String: String], value: String)] {
        let answer = (try? await get("query", [URLQueryItem(name: "query", value: expression)])) ?? [:]
        let result = ((answer["data"] as? [String: Any])?["result"] as? [[String: Any]]) ?? []
        return result.map { sample in
            (sample["metric"] as? [String: String] ?? [:], ((sample["value"] as? [Any])?.last as? String) ?? "")
        }
    }

    public func rules() async throws -> [Rule] {
        let answer = (try? await get("rules")) ?? [:]
        let groups = ((answer["data"] as? [String: Any])?["groups"] as? [[String: Any]]) ?? []
        return groups.flatMap { ($0["rules"] as? [[String: Any]]) ?? [] }.map { rule in
            Rule(
                name: rule["name"] as? String ?? "?", health: rule["health"] as? String ?? "?", lastError: rule["lastError"] as? String,
                evaluated: (rule["lastEvaluation"] as? String).map { !$0.hasPrefix("0001-") } ?? false,
                alerts: ((rule["alerts"] as? [[String: Any]]) ?? []).map { $0["labels"] as? [String: String] ?? [:] })
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
