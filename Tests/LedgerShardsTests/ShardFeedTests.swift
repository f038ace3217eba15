import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The change feed of a ledger on two shards (issue 49): one stream merged from both, each event
/// named by its shard and in its collaboration's order, its cursor a position per shard, resumed
/// by another `ledger serve` over the same shards with nothing lost or repeated.
@Suite("The change feed on shards")
struct ShardFeedTests {
    /// What a feed delivered so far.
    final class Received: Sendable {
        private let events = Mutex<[FeedEvent]>([])
        var all: [FeedEvent] { events.withLock { $0 } }
        func append(_ event: FeedEvent) { events.withLock { $0.append(event) } }
    }

    /// The events of `ids` on devin's feed after `cursor`, `count` of them awaited. Then a sentinel
    /// start on each shard: once both have come, what came before them is all the feed gives, so
    /// an event given twice or one unexpected shows (no wait on a clock).
    static func events(_ live: LiveShards, of ids: [String], after cursor: String, count: Int) async throws -> [FeedEvent] {
        let devin = live.client("devin")
        let received = Received()
        try await withThrowingTaskGroup(of: Void.self) { group in
            defer { group.cancelAll() }
            group.addTask { for try await event in devin.feed(resumingAfter: cursor) { received.append(event) } }
            try await waitUntil("\(count) events on the feed after \(cursor)") {
                received.all.filter { ids.contains($0.entry.collaborationId) }.count >= count
            }
            var sentinels: Set<String> = []
            for shard in live.shards.indices {
                var key = "sentinel-\(UUID())"
                while live.shard(of: key) != shard { key = "sentinel-\(UUID())" }
                sentinels.insert(
                    try await devin.prepareCollaboration(
                        localIdentifier: key, title: "Sentinel", initiator: Initiator(handle: "devin@example.com"), idempotencyKey: key
                    ).identifier)
            }
            let awaited = sentinels
            try await waitUntil("a sentinel from each shard") { awaited.isSubset(of: Set(received.all.map(\.entry.collaborationId))) }
        }
        let events = received.all.filter { ids.contains($0.entry.collaborationId) }
        #expect(events.count == count, "no event twice, none unexpected")
        return events
    }

    /// Six collaborations started and each given an identity (12 events devin sees), on both shards.
    static func write(_ live: LiveShards, round: Int) async throws -> [String] {
        let devin = live.client("devin")
        var ids: [String] = []
        for n in 0..<6 {
            let id = try await devin.prepareCollaboration(
                localIdentifier: "feed \(round).\(n)", title: "Feed \(n)", initiator: Initiator(handle: "devin@example.com"),
                idempotencyKey: "feed-\(round)-\(n)-\(UUID())"
            ).identifier
            _ = try await devin.updateParticipants(added: [SimulatedPerson(collaborationId: id, devices: 1).rootHashData], in: id)
            ids.append(id)
        }
        return ids
    }

    /// The feed merges both shards (events named by their shard, each collaboration's in order);
    /// another serve resumes it from a per-shard cursor with nothing lost or repeated; a cursor
    /// that is not one is refused.
    @Test("the feed merges both shards in order and resumes on another serve from a per-shard cursor, exactly")
    func resumed() async throws {
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        // The first serve: 12 events, read from the start; the cursor after the fifth kept.
        let kept = Mutex<(cursor: String, ids: [String])>(("", []))
        try await LiveShards.run(shards: shards) { live in
            var ids = try await Self.write(live, round: 0)
            while Set(ids.map { live.shard(of: $0) }).count < 2 { ids += try await Self.write(live, round: ids.count) }
            let all = try await Self.events(live, of: ids, after: "0,0", count: ids.count * 2)
            Self.check(all, live: live, ids: ids)
            kept.withLock { $0 = (all[4].cursor, ids) }
        }
        let (cursor, firstIds) = kept.withLock { $0 }
        // Another serve over the same shards (a restart): six more collaborations, then the feed
        // after the kept cursor is exactly what follows it on each shard.
        try await LiveShards.run(shards: shards) { live in
            let ids = firstIds + (try await Self.write(live, round: 100))
            let all = try await Self.events(live, of: ids, after: "0,0", count: ids.count * 2)
            Self.check(all, live: live, ids: ids)
            let positions = cursor.split(separator: ",").map { Int64($0) ?? 0 }
            #expect(positions.count == 2)
            let after = all.filter { $0.id > positions[$0.shard ?? 0] }
            #expect(after.count == all.count - 5)
            let resumed = try await Self.events(live, of: ids, after: cursor, count: after.count)
            for shard in 0..<2 {
                #expect(resumed.filter { $0.shard == shard }.map(\.id) == after.filter { $0.shard == shard }.map(\.id), "shard \(shard)")
            }
            // Refused with 400 before any stream: one position for two shards, a sign, a shard's position past its head.
            for refused in ["5", "1,-1", "0,0,0", "0, 1", "0,\(Int64.max)"] {
                var request = try await live.request("GET", "v1/feed", as: "devin")
                request.setValue(refused, forHTTPHeaderField: "Last-Event-ID")
                let (body, response) = try await TestHTTP.data(for: request)
                #expect(response.statusCode == 400, "\(refused)")
                #expect(String(decoding: body, as: UTF8.self).contains("\"code\":\"invalid_query\""), "\(refused)")
            }
        }
    }

    /// Each event on its collaboration's shard, each collaboration's start then its add, and every collaboration's two there.
    static func check(_ all: [FeedEvent], live: LiveShards, ids: [String]) {
        #expect(all.allSatisfy { $0.shard == live.shard(of: $0.entry.collaborationId) }, "each event named by its shard")
        for id in ids {
            #expect(all.filter { $0.entry.collaborationId == id }.map(\.type) == ["CollaborationStarted", "IdentityAdded"], "\(id)")
        }
        for shard in 0..<2 {
            let positions = all.filter { $0.shard == shard }.map(\.id)
            #expect(positions == positions.sorted(), "shard \(shard)'s events in its log order")
        }
        #expect(Set(all.map(\.shard)) == [0, 1])
    }
}
