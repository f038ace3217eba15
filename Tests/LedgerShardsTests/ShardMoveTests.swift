import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import LedgerWebhooks
import PostgresNIO
import Synchronization
import Testing
import TransparencyLog

@testable import LedgerShards

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adding a shard by moving a partition (issue 49, docs/SCALING.md "Adding a shard"): `ledger
/// shards move` with the servers stopped, then `ledger serve` on three shards. The moved
/// collaborations answer from the new shard with their whole history and their evidence, each
/// shard acts only on what it holds (a window due during the move expires once, on the new shard),
/// and every account-wide read names each collaboration once.
@Suite("Adding a shard")
struct ShardMoveTests {
    /// The collaborations with events after `position` on `shard`.
    static func written(on shard: DatabaseSettings, after position: Int64) async throws -> Set<String> {
        try await withClient(shard) { client in
            var ids: Set<String> = []
            let rows = try await client.query(
                """
                SELECT DISTINCT ledger_stream_collaboration(stream_id) FROM ledger_events
                WHERE position > \(position) AND ledger_is_collaboration_stream(stream_id)
                """)
            for try await id in rows.decode(String.self) { ids.insert(id) }
            return ids
        }
    }

    static func move(_ arguments: [String], top: DatabaseSettings) async throws -> ProcessRunner.Output {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
        environment["LEDGER_DATABASE_URL"] = top.url(revealPassword: true)
        return try await ProcessRunner.run(ledgerBinary(), ["shards", "move"] + arguments, environment: environment)
    }

    static func all<Item: Sendable>(_ pages: LedgerPages<Item>) async throws -> [Item] {
        var items: [Item] = []
        for try await item in pages { items.append(item) }
        return items
    }

    /// A shard's head position.
    static func head(_ shard: DatabaseSettings) async throws -> Int64 {
        try await withClient(shard) { client in
            try await client.query("SELECT position FROM ledger_head").decode(Int64.self).reduce(0) { max($0, $1) }
        }
    }

    static let configuration = LedgerConfiguration.testing { $0.webhooksAllowPrivate = true }
    /// Retries every second at most, so the backlog goes out soon after the move.
    static let deliveries = {
        var settings = WebhookDeliverer.Settings()
        settings.allowPrivate = true
        settings.longestRetry = .seconds(1)
        return settings
    }()

    static func map(_ top: DatabaseSettings) async throws -> ShardMap {
        try await withClient(top) { try await ShardCluster.map(server: "ledger_shards", client: $0, logger: LiveShards.logger) }
    }

    /// A partition moved to a new shard with the servers stopped: its collaborations answer from it
    /// with their history, commands and evidence through both levels; each shard writes only what
    /// it holds (a window due during the move expires once, on the new shard); lists, the audit,
    /// the feed and a webhook's backlog name each once, and a feed cursor from before the move
    /// resumes with nothing lost or repeated; a rebuild keeps it so; bad moves refused, changing
    /// nothing; a move cut short: the shard it left refused by serve (the others served), and the move finished by running it again.
    @Test("a partition moved to a new shard: answers, writes, lists, feed, rebuilds and refusals stay right")
    func move() async throws {
        let receiver = WebhookReceiver()
        try await receiver.serving { url in
            let signer = try NoteSigner(name: "move.test/ledger")
            let (top, a, b) = (
                try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase(),
                try await TestCluster.shared.makeDatabase()
            )
            let target = {
                var target = a
                target.database = "\(a.database)_moved"
                return target
            }()
            // Shard 0 (a) holds partitions 0, 3, 4, 5 and 7; one after shard 1's first (1) moves.
            let candidates = [3, 4, 5, 7]
            let setUp = Mutex<
                (ids: [String], granted: [String], partition: Int, window: String, histories: [String: [String]], cursor: String)?
            >(nil)
            try await LiveShards.run(
                shards: [a, b], top: top, configuration: Self.configuration, signer: signer, deliveries: Self.deliveries
            ) { live in
                let (devin, alice) = (live.client("devin"), live.client("alice"))
                // A webhook of every collaboration whose receiver refuses until after the move: its
                // backlog then holds events of both sides of the move.
                receiver.script("every", Array(repeating: 503, count: 100_000))
                _ = try await devin.registerWebhook(url: url.appendingPathComponent("every").absoluteString)
                var started: [(id: String, person: SimulatedPerson)] = []
                for n in 0..<24 {
                    let id = try await devin.prepareCollaboration(
                        localIdentifier: "move \(n)", title: "Move \(n)", initiator: Initiator(handle: "devin@example.com")
                    ).identifier
                    let person = SimulatedPerson(collaborationId: id, devices: 1)
                    _ = try await devin.updateParticipants(added: [person.rootHashData], in: id)
                    started.append((id, person))
                }
                let partition = try #require(
                    candidates.max { a, b in
                        started.filter { live.map.partition(of: $0.id) == a }.count
                            < started.filter { live.map.partition(of: $0.id) == b }.count
                    })
                let moving = started.filter { live.map.partition(of: $0.id) == partition }
                try #require(moving.count >= 2, "24 starts put two in one of four partitions")
                let staying = started.filter { live.map.partition(of: $0.id) != partition }
                // A feed client's cursor here, resumed on three shards after the move.
                let cursor = "\(try await Self.head(a)),\(try await Self.head(b))"
                var granted: [String] = []
                for (id, person) in moving + staying.prefix(4) {
                    guard case .granted = try await verify(alice, person, in: id) else {
                        Issue.record("\(id): not granted")
                        return
                    }
                    granted.append(id)
                }
                // Refused while a server uses the shard: the move is offline.
                let served = try await Self.move(["--partition", "\(partition)", "--to", LiveShards.connection(target)], top: top)
                #expect(served.status != 0 && served.output.contains("stop every `ledger serve`"), "\(served.output)")
                var histories: [String: [String]] = [:]
                for (id, _) in started {
                    histories[id] = try await Self.all(devin.allHistory(of: id)).map { "\($0.position) \($0.type)" }
                }
                // Due while the servers are stopped or soon after: only the new shard may expire it.
                _ = try await TestWindows.endIn(20, devin, moving[0].id, [moving[0].person])
                histories[moving[0].id] = try await Self.all(devin.allHistory(of: moving[0].id)).map { "\($0.position) \($0.type)" }
                setUp.withLock { $0 = (started.map(\.id), granted, partition, moving[0].id, histories, cursor) }
            }
            let (ids, granted, partition, window, histories, cursor) = try #require(setUp.withLock { $0 })
            let before = try await Self.map(top)

            for (arguments, expected) in [
                (["--partition", "1", "--to", LiveShards.connection(target)], "shards' order"),
                (["--partition", "8", "--to", LiveShards.connection(target)], "not one of"),
                (["--partition", "\(partition)", "--to", LiveShards.connection(b)], "already a shard"),
                (["--partition", "\(partition)", "--to", LiveShards.connection(a)], "nothing to move or finish"),
                (["--partition", "\(partition)", "--to", LiveShards.connection(top)], "the ledger's own database"),
            ] {
                let refused = try await Self.move(arguments, top: top)
                #expect(refused.status != 0 && refused.output.contains(expected), "\(arguments): \(refused.output)")
            }
            #expect(try await Self.map(top) == before, "a refused move changed the map")
            let moved = try await Self.move(["--partition", "\(partition)", "--to", LiveShards.connection(target)], top: top)
            try #require(moved.status == 0, "\(moved.output)")
            #expect(moved.output.contains("moved from \(LiveShards.connection(a)) to \(LiveShards.connection(target)) (shard 2, copied"))
            let head = try await Self.head(a)
            var layout = LiveShards.layout
            layout[partition] = 2
            // A move cut short after the map named shard 2, before shard 0 forgot the partition (its
            // record put back as the move leaves it then): serve refuses shard 0 alone, which still
            // holds it, serving the others, and the same move run again finishes it.
            let heldBefore = LiveShards.layout.indices.filter { LiveShards.layout[$0] == 0 }.map(Int32.init)
            try await withClient(a) { try await $0.query("UPDATE ledger_held_partitions SET held = \(heldBefore)") }
            try await LiveShards.run(
                shards: [a, b, target], top: top, layout: layout, configuration: Self.configuration, signer: signer,
                deliveries: Self.deliveries
            ) { live in
                let moved = try #require(ids.first { live.map.partition(of: $0) == partition })
                let kept = try #require(ids.first { live.shard(of: $0) == 0 })
                let other = try #require(ids.first { live.shard(of: $0) == 1 })
                let refused = try await ShardRefusalTests.get(live, "v1/collaborations/\(kept)/members")
                #expect(refused.status == 503 && refused.retryAfter != nil, "\(refused.status) \(refused.body)")
                for id in [moved, other] {
                    #expect(try await ShardRefusalTests.get(live, "v1/collaborations/\(id)/members").status == 200)
                }
                #expect(try await ShardRefusalTests.get(live, "ready").status == 200)
            }
            let again = try await Self.move(["--partition", "\(partition)", "--to", LiveShards.connection(target)], top: top)
            #expect(again.status == 0 && again.output.contains("(shard 2, a move cut short finished)"), "\(again.output)")

            receiver.script("every", [])
            try await LiveShards.run(
                shards: [a, b, target], top: top, layout: layout, configuration: Self.configuration, signer: signer,
                deliveries: Self.deliveries
            ) { live in
                try await ShardMoveChecks(
                    live: live, ids: ids, granted: granted, window: window, histories: histories, head: head, cursor: cursor,
                    signer: signer, receiver: receiver
                ).run()
            }
        }
    }
}
