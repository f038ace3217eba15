import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

@testable import LedgerShards

/// The partition map in the top log (`TopLogRecorder`): recorded once, as an instance starts,
/// and again only by an instance that serves another (the start after a move); the instance
/// whose map is no longer the last recorded records nothing more, so two maps never take turns.
@Suite("The recorded partition map")
struct RecordedMapTests {
    @Test("a map is recorded once; a newer one by a later instance; the older instance then refuses")
    func newerMapStopsTheOlder() async throws {
        try await withTestStore { store, client, _ in
            let logger = Logger(label: "recorded-map")
            let (before, after) = (ShardMapRecorded(partitions: [0, 1, 1, 0]), ShardMapRecorded(partitions: [2, 1, 1, 0]))
            let old = TopLogRecorder(top: store, map: before, shards: [], logger: logger)
            let first = try await old.recordMap()
            #expect(try await old.recordMap() == first, "the same map again records nothing")
            #expect(try await old.mapInForce() == first)
            // An instance started after a move serves the map that names the new shard.
            let new = TopLogRecorder(top: store, map: after, shards: [], logger: logger)
            let second = try await new.recordMap()
            let inForce = try await new.mapInForce()
            #expect(second > first && inForce == second)
            await #expect(throws: TopLogRecorder.Refused.self, "the older instance's map is stale") {
                try await old.mapInForce()
            }
            let maps = try await client.query("SELECT data::text FROM ledger_events WHERE stream_id = 'shard-map' ORDER BY position")
                .decode(String.self).reduce(into: [String]()) { $0.append($1) }
            #expect(maps == [CanonicalJSON.encode(before), CanonicalJSON.encode(after)])
        }
    }
}
