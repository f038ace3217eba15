import Foundation
import LedgerPostgres
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

@testable import LedgerShards

/// `ledger shards move` and `init` refusing a database that cannot be a shard, each in the one
/// sentence the real binary ends with, naming what is wrong and what to do (issue 66, item 5),
/// where PostgresNIO alone said "PSQLError – Generic description…". Nothing changes.
@Suite("Moves and shards refused, each in a sentence")
struct ShardMoveRefusalTests {
    /// The sentence the command ended with (ArgumentParser's "Error: " line).
    static func said(_ run: ProcessRunner.Output) -> String {
        run.output.split(separator: "\n").last { $0.hasPrefix("Error: ") }.map(String.init) ?? "(no error line) \(run.output)"
    }

    /// The ledger's database with a cluster over two shards (eight partitions: 2 may move).
    static func cluster() async throws -> (top: DatabaseSettings, source: DatabaseSettings, map: ShardMap) {
        let (top, a, b) = (
            try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase(),
            try await TestCluster.shared.makeDatabase()
        )
        let made = try await ShardsInitTests.initShards(
            ["--shard", LiveShards.connection(a), "--shard", LiveShards.connection(b), "--partitions", "8"], top: top)
        try #require(made.status == 0, "\(made.output)")
        return (top, a, try await ShardMoveTests.map(top))
    }

    @Test("a move to postgres, a template, the ledger's own database or one holding no ledger says why")
    func targets() async throws {
        let (top, source, before) = try await Self.cluster()
        let other = try await TestCluster.shared.makeEmptyDatabase()
        let server = "one of PostgreSQL's own databases (postgres, template0, template1), which is never a shard"
        for (target, sentence) in [
            ("dbname=postgres", "dbname=postgres names postgres, \(server): name a database for the shard alone"),
            ("dbname=template1", "dbname=template1 names template1, \(server): name a database for the shard alone"),
            (
                LiveShards.connection(top),
                "\(LiveShards.connection(top)) names \(top.database), the ledger's own database (it keeps the top log and the "
                    + "PL/Proxy cluster's definition), which is never a shard: name another database"
            ),
            (
                LiveShards.connection(other),
                "\(LiveShards.connection(other)) names \(other.database), a database that holds no ledger: name one that does "
                    + "not exist yet on \(source.host):\(source.port) (the move makes it there, a copy of \(source.database)), or a "
                    + "copy of \(source.database) made before (docs/SCALING.md)"
            ),
        ] {
            let run = try await ShardMoveTests.move(["--partition", "2", "--to", target], top: top)
            #expect(run.status != 0 && Self.said(run) == "Error: \(sentence)", "\(run.output)")
        }
        #expect(try await ShardMoveTests.map(top) == before, "a refused move changed the map")
    }

    @Test("a move whose new shard's server refuses the login names the role, server and password's source")
    func refusedLogin() async throws {
        let (top, _, before) = try await Self.cluster()
        try await withOwnCluster(logger: Logger(label: "test")) { own, _ in
            // Another server, whose owner's password is not the ledger's.
            let target = "host=\(own.host) port=\(own.port) dbname=ledger_moved"
            let run = try await ShardMoveTests.move(["--partition", "2", "--to", target], top: top)
            #expect(run.status != 0)
            #expect(
                Self.said(run)
                    == "Error: reaching the new shard \(target) with the ledger's own login: PostgreSQL at \(own.host):\(own.port) "
                    + "refused the login of role \"\(top.username)\" to database \"ledger_moved\" (SQLSTATE 28P01: password "
                    + "authentication failed for user \"\(top.username)\"). Check the password in LEDGER_DATABASE_URL (or "
                    + "--database-url) and that the server's pg_hba.conf admits this role from this host.", "\(run.output)")
        }
        #expect(try await ShardMoveTests.map(top) == before, "a refused move changed the map")
    }

    @Test("shards init over postgres or the ledger's own database says why, defining nothing")
    func initTargets() async throws {
        let (top, a) = (try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase())
        for (shard, sentence) in [
            (
                "dbname=template0",
                "dbname=template0 names template0, one of PostgreSQL's own databases (postgres, template0, template1), which is "
                    + "never a shard: name a database for the shard alone"
            ),
            (
                LiveShards.connection(top),
                "\(LiveShards.connection(top)) names \(top.database), the ledger's own database (it keeps the top log and the "
                    + "PL/Proxy cluster's definition), which is never a shard: name another database"
            ),
        ] {
            let run = try await ShardsInitTests.initShards(["--shard", LiveShards.connection(a), "--shard", shard], top: top)
            #expect(run.status != 0 && Self.said(run) == "Error: \(sentence)", "\(run.output)")
        }
        let servers = try await withClient(top) {
            try await $0.query("SELECT count(*) FROM pg_foreign_server").decode(Int64.self).reduce(0, +)
        }
        #expect(servers == 0)
    }
}
