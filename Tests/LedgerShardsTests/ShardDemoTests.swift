import Foundation
import LedgerPostgres
import LedgerTestSupport
import Testing
import TransparencyLog

/// `ledger demo` against two shards (issue 49): the same life cycle as on one database, bob's
/// export and erasure on every shard, his grant's evidence through both levels.
@Suite("The demo on shards")
struct ShardDemoTests {
    @Test("ledger demo --url on two shards: bob's evidence verifies at both levels, before and after erasure")
    func demo() async throws {
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        try await LiveShards.run(shards: shards, signer: try NoteSigner(name: "demo.test/ledger")) { live in
            let run = try await ledgerDemo(against: live.baseURL, secret: live.secret)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.components(separatedBy: "recorded in the top log, device proof verified: true").count == 3, "\(run.output)")
            #expect(run.output.contains("held for bob on shard"), "\(run.output)")
            #expect(run.output.contains("mallory: refused"), "\(run.output)")
            #expect(run.output.contains("asked again: held false"), "\(run.output)")
        }
    }
}
