import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// Times rise along the log (migration 0037; docs/TRUST.md, "Members at a time"): an append takes
/// its time once it holds the head's lock, never below the previous append's, on both append
/// paths; so the first position recorded after a time bounds every event recorded by then.
@Suite("Rising times")
struct RisingTimesTests {
    /// Appends `events` events while another session holds the head's lock; returns the
    /// database's clock read just before that session let go, and the events appended.
    static func appendBehindHeldHead(
        _ store: EventStore, _ client: PostgresClient, _ settings: DatabaseSettings, stream: String, events: Int
    ) async throws -> (released: Int64, appended: [RecordedEvent]) {
        let logger = Logger(label: "holder")
        let released = try await withClient(settings) { holderClient in
            try await holderClient.withConnection { holder in
                try await holder.query("BEGIN", logger: logger)
                try await holder.query("SELECT FROM ledger_head FOR UPDATE", logger: logger)
                let append = Task {
                    try await store.append(
                        .init(streamId: stream, expectedVersion: .noStream, events: (0..<events).map { event("Held", $0) }))
                }
                try await waitUntil(timeout: .seconds(20), "the append to wait on the head's lock") {
                    try await client.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                    ).decode(Int64.self).reduce(0) { $1 } == 1
                }
                var released: Int64 = 0
                for try await micros in try await holder.query(
                    "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::int8", logger: logger
                ).decode(Int64.self) { released = micros }
                try await holder.query("COMMIT", logger: logger)
                _ = try await append.value
                return released
            }
        }
        return (released, try await store.readStream(stream))
    }

    @Test("an append waiting on the head's lock takes its time after it, one event or a large group")
    func timeTakenUnderTheLock() async throws {
        try await withTestStore { store, client, settings in
            // One event (ledger_append), then a group on the two-call path (ledger_append_plan).
            for (stream, count) in [("one", 1), ("large", 250)] {
                let (released, appended) = try await Self.appendBehindHeldHead(store, client, settings, stream: stream, events: count)
                #expect(appended.count == count)
                for event in appended {
                    #expect(event.recordedAtMicros >= released, "\(stream): recorded before the lock was let go")
                }
            }
            // The head keeps the last time, and every append after it starts there.
            let rows = try await client.query("SELECT (extract(epoch FROM recorded_at) * 1000000)::int8 FROM ledger_head")
            let head = try await rows.decode(Int64.self).reduce(0) { $1 }
            #expect(head == (try await store.readAll(after: 0, limit: 1_000).last?.recordedAtMicros))
        }
    }

    @Test("an append never records a time below the previous one's, the clock behind it, on both paths")
    func neverBelowThePrevious() async throws {
        try await withTestStore { store, client, _ in
            _ = try await store.append(.init(streamId: "before", expectedVersion: .noStream, events: [event("Before")]))
            // The head's time an hour ahead, as after a clock stepped back by an hour.
            try await client.query("UPDATE ledger_head SET recorded_at = recorded_at + interval '1 hour'")
            let ahead = try await client.query("SELECT (extract(epoch FROM recorded_at) * 1000000)::int8 FROM ledger_head")
                .decode(Int64.self).reduce(0) { $1 }
            _ = try await store.append(.init(streamId: "after", expectedVersion: .noStream, events: [event("After")]))
            #expect(try await store.readStream("after").first?.recordedAtMicros == ahead)
            // A large group too (ledger_append_plan), with the head's time ahead again.
            try await client.query("UPDATE ledger_head SET recorded_at = recorded_at + interval '1 hour'")
            _ = try await store.append(
                .init(streamId: "large", expectedVersion: .noStream, events: (0..<250).map { event("Large", $0) }))
            #expect(try await store.readStream("large").allSatisfy { $0.recordedAtMicros == ahead + 3_600_000_000 })
        }
    }

    @Test("the first position recorded after a time: each boundary of a log, and none past its end")
    func firstRecordedAfter() async throws {
        try await withTestStore { store, _, _ in
            for i in 0..<40 {
                _ = try await store.append(.init(streamId: "s-\(i % 3)", expectedVersion: .any, events: [event("E", i)]))
            }
            let log = try await store.readAll(after: 0, limit: 100)
            #expect(log.count == 40)
            #expect(try await store.firstPosition(recordedAfter: log[0].recordedAtMicros - 1, through: 40) == 1)
            for (index, event) in log.enumerated() {
                // The first position recorded after this event's time: past every event of that time.
                let expected = log.dropFirst(index).first { $0.recordedAtMicros > event.recordedAtMicros }?.position
                #expect(try await store.firstPosition(recordedAfter: event.recordedAtMicros, through: 40) == expected)
                // Within a shorter tree, nothing past its size.
                let within = try await store.firstPosition(recordedAfter: event.recordedAtMicros, through: event.position)
                #expect(within == nil, "at \(event.position)")
            }
            #expect(try await store.firstPosition(recordedAfter: 0, through: 0) == nil)
        }
    }
}
