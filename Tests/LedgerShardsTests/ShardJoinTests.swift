import Foundation
import LedgerClient
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 66: `ledger serve` starts with shards down. It serves the others as it starts, refuses
/// the missing shards' requests with 503, and once one accepts connections, migrates it, checks it
/// and serves it (`ShardJoin`), with no restart.
@Suite("Shards down at start")
struct ShardJoinTests {
    /// Shard 1 (migrated, as after an outage) and shard 2 (a database never migrated) refuse the
    /// services' connections when `ledger serve` starts (CONNECTION LIMIT 0; their owner, a
    /// superuser, is not held by it). Shard 1 must be served within 30 s of accepting; shard 2,
    /// which has its whole schema to build on a test cluster every suite shares, within 120 s.
    @Test("serve starts with two shards refusing: shard 0 serves at once, the others once they accept")
    func startsWithShardsDown() async throws {
        let (first, top) = (try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase())
        let (second, third) = (try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeEmptyDatabase())
        for shard in [second, third] { try await Self.limit(shard, 0) }
        try await LiveShards.run(shards: [first, second, third], top: top, layout: [0, 1, 2, 0, 1, 2, 1, 2], shardOwner: top) { live in
            let devin = live.client("devin")
            // Shard 0 serves from the first request: no wait for the missing shards.
            let running = try await devin.prepareCollaboration(
                localIdentifier: "running", title: "Running", initiator: Initiator(handle: "devin@example.com"),
                idempotencyKey: ShardLossTests.key(placedOn: 0, live))
            #expect(try await devin.collaboration(running.identifier, minPosition: running.position).title == "Running")
            #expect(try await ShardRefusalTests.get(live, "ready").status == 200)
            for shard in [1, 2] {
                let refused = try await Self.start(on: shard, live)
                #expect(refused.status == 503 && refused.retryAfter != nil, "\(String(decoding: refused.body, as: UTF8.self))")
            }

            // They accept: each is migrated as it joins, then takes a start and folds it.
            for shard in [second, third] { try await Self.limit(shard, -1) }
            let accepted = ContinuousClock.now
            for (shard, bound) in [(1, 30), (2, 120)] {
                let started = Mutex<Data?>(nil)
                try await waitUntil(timeout: .seconds(bound), "shard \(shard) served within \(bound) s of accepting") {
                    let answer = try await Self.start(on: shard, live)
                    #expect([201, 503].contains(answer.status), "\(String(decoding: answer.body, as: UTF8.self))")
                    if answer.status == 201 { started.withLock { $0 = answer.body } }
                    return answer.status == 201
                }
                print("shard \(shard) served \(ContinuousClock.now - accepted) after accepting")
                let answer = try JSONDecoder().decode(StartResponse.self, from: try #require(started.withLock { $0 }))
                #expect(live.shard(of: answer.collaborationId) == shard)
                #expect(try await devin.collaboration(answer.collaborationId, minPosition: answer.position).title == "Shard \(shard)")
                #expect(try await live.events(on: shard) == 1, "the start appended once, on shard \(shard)")
            }
        }
    }

    /// A start routed to `shard` by its Idempotency-Key (the same key each time: a retry).
    static func start(on shard: Int, _ live: LiveShards) async throws -> (status: Int, retryAfter: String?, body: Data) {
        let body = #"{"localIdentifier":"s\#(shard)","title":"Shard \#(shard)","initiatorHandle":"devin@example.com"}"#
        var request = try await live.request("POST", "v1/collaborations", as: "devin", body: body)
        request.setValue(ShardLossTests.key(placedOn: shard, live), forHTTPHeaderField: "Idempotency-Key")
        let (answer, response) = try await TestHTTP.data(for: request)
        return (response.statusCode, response.value(forHTTPHeaderField: "Retry-After"), answer)
    }

    static func limit(_ shard: DatabaseSettings, _ connections: Int) async throws {
        try await ShardRefusalTests.admin(
            shard, "ALTER DATABASE \(PostgresAdmin.quoteIdentifier(shard.database)) CONNECTION LIMIT \(connections)")
    }
}
