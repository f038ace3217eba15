import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 49's shards under the shipped monitoring: one `ledger serve` (a process of its own, so
/// no other test's server records into its `/metrics`) runs every shard's workers, and each
/// shard's figures are series of their own (`ShardMetrics`), scraped by a real Prometheus with
/// the shipped alert rules: a window overdue on one shard fires `LedgerExpiryOverdue` for that
/// shard, never hidden by another shard's 0.
@Suite("Monitoring on shards")
struct ShardMonitoringTests {
    static func connection(_ settings: DatabaseSettings) -> String {
        "host=\(settings.host) port=\(settings.port) dbname=\(settings.database)"
    }

    /// Shard k of `shards` holding `id` (its events), if one does.
    static func shard(of id: String, _ shards: [DatabaseSettings]) async throws -> Int? {
        for (index, shard) in shards.enumerated() {
            let held = try await withClient(shard) { client in
                try await client.query("SELECT count(*) FROM ledger_events WHERE stream_id = \("collaboration-" + id)")
                    .decode(Int64.self).reduce(0) { $0 + $1 }
            }
            if held > 0 { return index }
        }
        return nil
    }

    /// Each shard's projections, checkpoints, pool, appends and expiry are series of their own (the
    /// top log's checkpoints too); a window overdue on shard 1 alone fires LedgerExpiryOverdue for
    /// shard 1 while shard 0 reads 0, and it clears once shard 1 expires it.
    @Test("each shard's metrics are series of their own; an expiry overdue on one shard alerts for it alone")
    func perShard() async throws {
        let (top, a, b) = (
            try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase(),
            try await TestCluster.shared.makeDatabase()
        )
        let shards = [a, b]
        let defined = try await ProcessRunner.run(
            ledgerBinary(), ["shards", "init", "--shard", Self.connection(a), "--shard", Self.connection(b), "--partitions", "8"],
            environment: ConfigurationTests.environment(["LEDGER_DATABASE_URL": top.url(revealPassword: true)]))
        try #require(defined.status == 0, "\(defined.output)")
        let folder = try ExpiryProcessTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ExpiryProcessTests.serve(
            top, in: folder, name: "serve", settings: ["LEDGER_SHARD_CLUSTER": "ledger_shards"])
        defer {
            kill(server.pid, SIGKILL)
            _ = ProcessRunner.exitStatus(of: server.pid)
        }
        let devin = try await ExpiryProcessTests.client(server, "devin")
        // A collaboration on each shard, with a member.
        var held: [Int: (id: String, person: SimulatedPerson)] = [:]
        for n in 0..<40 where held.count < 2 {
            let id = try await devin.prepareCollaboration(
                localIdentifier: "doc \(n)", title: "Doc \(n)", initiator: Initiator(handle: "devin@example.com")
            ).identifier
            let shard = try #require(try await Self.shard(of: id, shards), "\(id) on no shard")
            guard held[shard] == nil else { continue }
            let person = SimulatedPerson(collaborationId: id, devices: 1)
            _ = try await devin.updateParticipants(added: [person.rootHashData], in: id)
            held[shard] = (id, person)
        }
        let late = try #require(held[1], "no collaboration on shard 1 in 40 starts")

        try await TestPrometheus.run(scraping: server.url) { prometheus in
            let expected = [
                "ledger_projection_position": ["0", "1"], "ledger_expiry_overdue": ["0", "1"], "ledger_database_up": ["0", "1"],
                "ledger_appended_events_total": ["0", "1", "top"], "ledger_checkpoint_size": ["0", "1", "top"],
            ]
            try await waitUntil(timeout: .seconds(90), interval: .milliseconds(250), "each shard's series scraped") {
                for (name, labels) in expected {
                    let scraped = Set(try await prometheus.query(name).compactMap { $0.labels["shard"] })
                    guard Set(labels).isSubset(of: scraped) else { return false }
                }
                return true
            }
            // Rules evaluated before the first scrape hold `absent(…)` alerts until their next evaluation.
            try await waitUntil(timeout: .seconds(30), interval: .milliseconds(250), "every alert rule evaluated, none pending") {
                try await prometheus.rules().allSatisfy { $0.evaluated && $0.alerts.isEmpty }
            }
            for rule in try await prometheus.rules() {
                #expect(rule.health == "ok", "\(rule.name): \(rule.lastError ?? "")")
            }

            try await withClient(b) { client in
                try await ExpirySquatter.holding(client) { _ in
                    _ = try await TestWindows.endIn(2, devin, late.id, [late.person])
                    try await waitUntil(timeout: .seconds(60), interval: .milliseconds(250), "LedgerExpiryOverdue for shard 1") {
                        try await prometheus.rules().first { $0.name == "LedgerExpiryOverdue" }?.alerts.map { $0["shard"] } == ["1"]
                    }
                    let overdue = Dictionary(
                        try await prometheus.query("ledger_expiry_overdue").map { ($0.labels["shard"] ?? "", $0.value) }
                    ) { $1 }
                    #expect(overdue["0"] == "0" && overdue["1"].flatMap(Double.init).map { $0 >= 1 } == true, "\(overdue)")
                }
            }
            // The squatter gone, shard 1's service takes its lease back and expires the window.
            try await waitUntil(timeout: .seconds(60), interval: .milliseconds(250), "LedgerExpiryOverdue cleared") {
                try await prometheus.rules().first { $0.name == "LedgerExpiryOverdue" }?.alerts.isEmpty == true
            }
        }
    }
}
