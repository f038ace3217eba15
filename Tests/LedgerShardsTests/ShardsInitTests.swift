import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

@testable import LedgerShards

/// `ledger shards init --shard …` (issue 49): the cluster defined over shard databases that exist
/// elsewhere (a Patroni cluster's leader each, deploy/patroni), as `scripts/shards ha` runs it.
@Suite("ledger shards init over existing databases")
struct ShardsInitTests {
    static func initShards(_ arguments: [String], top: DatabaseSettings) async throws -> ProcessRunner.Output {
        var environment = ProcessInfo.processInfo.environment
        environment[Setting.databaseURL.variable] = top.url(revealPassword: true)
        return try await ProcessRunner.run(ledgerBinary(), ["shards", "init"] + arguments, environment: environment)
    }

    static func connection(_ settings: DatabaseSettings) -> String {
        "host=\(settings.host) port=\(settings.port) dbname=\(settings.database)"
    }

    @Test("--shard twice: eight partitions over both, both migrated; again, no change; another order refused")
    func existing() async throws {
        let (top, a, b) = (
            try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase(),
            try await TestCluster.shared.makeDatabase()
        )
        let arguments = ["--shard", Self.connection(a), "--shard", Self.connection(b), "--partitions", "8"]
        let made = try await Self.initShards(arguments, top: top)
        #expect(made.status == 0, "\(made.output)")
        #expect(made.output.contains("ledger_shards: 8 partitions over 2 shards"), "\(made.output)")
        let map = try await withClient(top) {
            try await ShardCluster.map(server: "ledger_shards", client: $0, logger: Logger(label: "test"))
        }
        #expect(map.partitions == (0..<8).map { Self.connection($0 % 2 == 0 ? a : b) })
        for shard in [a, b] {
            let tables = try await withClient(shard) { client in
                try await client.query("SELECT count(*) FROM pg_tables WHERE tablename = 'ledger_events'").decode(Int64.self).reduce(0, +)
            }
            #expect(tables == 1, "\(shard.database) is migrated")
        }
        #expect(try await Self.initShards(arguments, top: top).status == 0, "the same cluster again changes nothing")
        let reordered = try await Self.initShards(
            ["--shard", Self.connection(b), "--shard", Self.connection(a), "--partitions", "8"], top: top)
        #expect(reordered.status != 0 && reordered.output.contains("already defined with other partitions"), "\(reordered.output)")
    }

    /// Refused before anything is defined: --count with --shard, neither, a --shard twice (however
    /// spelled), the ledger's own database, a connection string without dbname or with more.
    @Test("refused before anything is defined: bad --count/--shard mixes, the ledger's database, bad strings")
    func refusals() async throws {
        let (top, a) = (try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase())
        for arguments in [
            ["--count", "2", "--shard", Self.connection(a)], [], ["--shard", Self.connection(a), "--shard", Self.connection(a)],
            ["--shard", "host=\(a.host) port=\(a.port)"], ["--shard", "host=\(a.host) dbname=\(a.database) sslmode=disable"],
            ["--shard", Self.connection(a), "--shard", "dbname=\(a.database) port=\(a.port) host=\(a.host)"],
            ["--shard", Self.connection(a), "--shard", Self.connection(top)],
        ] {
            let run = try await Self.initShards(arguments, top: top)
            #expect(run.status != 0, "\(arguments): \(run.output)")
            let servers = try await withClient(top) { client in
                try await client.query("SELECT count(*) FROM pg_foreign_server").decode(Int64.self).reduce(0, +)
            }
            #expect(servers == 0, "\(arguments) defined a cluster")
        }
    }
}
