import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import PostgresNIO
import Testing

@testable import LedgerStore

/// The commands' reads, grouped: each read in a group gets its own stream, its own caller's
/// pseudonym and the database's time, whatever else shared its statement.
@Suite("Command reads, grouped")
struct CommandReadsTests {
    @Test(
        "40 reads queued behind one another go as groups, and each gets its own stream (or none), its own pseudonym and the database's time"
    )
    func ownAnswers() async throws {
        try await withTestStore { store, client, settings in
            var streams: [String: Int64] = [:]
            for n in 1...3 {
                let id = try await ExpiryScheduleTests.start(store)
                for _ in 0..<n {  // versions 1, 2 and 3 apart
                    _ = try await store.append(
                        .init(
                            streamId: Streams.collaboration(id), expectedVersion: .any,
                            events: [
                                CollaborationEvent.highlightPosted(
                                    .init(kind: .change, trigger: nil, mentionedRootHash: nil, account: "owner")
                                )
                                .newEvent(metadata: .init())
                            ]))
                }
                streams[Streams.collaboration(id)] = Int64(n + 1)
            }
            let (names, versions) = (streams.keys.sorted(), streams)
            let before = try await Self.databaseNow(client)
            // The first statement waits on a lock (its new pseudonyms need an insert), so the others
            // queue behind it and go together once it is let go.
            try await withClient(settings) { holderClient in
                try await holderClient.withConnection { holder in
                    try await holder.query("BEGIN", logger: store.logger)
                    try await holder.query("LOCK TABLE ledger_subjects IN EXCLUSIVE MODE", logger: store.logger)
                    let reads = Task {
                        try await withThrowingTaskGroup(of: (Int, CommandReads.Read).self) { group in
                            for i in 0..<40 {
                                let stream = i % 4 == 3 ? "collaboration-missing-\(i)" : names[i % 3]
                                group.addTask {
                                    (
                                        i,
                                        try await store.reads.read(
                                            .init(stream: stream, account: "reader-\(i)"), client: client, logger: store.logger)
                                    )
                                }
                            }
                            return try await group.reduce(into: [Int: CommandReads.Read]()) { $0[$1.0] = $1.1 }
                        }
                    }
                    try await waitUntil(timeout: .seconds(10), "the first read waiting on the lock") {
                        try await client.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").decode(Int64.self)
                            .reduce(0) { $1 } >= 1
                    }
                    try await holder.query("COMMIT", logger: store.logger)
                    let answers = try await reads.value
                    let after = try await Self.databaseNow(client)
                    #expect(answers.count == 40)
                    for (i, read) in answers {
                        if i % 4 == 3 {
                            #expect(read.stream == nil, "\(i): a stream with no row")
                        } else {
                            #expect(read.stream?.version == versions[names[i % 3]], "\(i): its own stream's version")
                        }
                        #expect(
                            read.subject == (try await Subjects(store: store).existing("reader-\(i)")), "\(i): its own caller's pseudonym")
                        #expect(read.now >= before && read.now <= after, "\(i): the database's time of its read")
                    }
                    #expect(Set(answers.values.compactMap(\.subject)).count == 40)
                }
            }
        }
    }

    @Test("a read with no account gets no pseudonym, and none is made")
    func noAccount() async throws {
        try await withTestStore { store, client, _ in
            let id = try await ExpiryScheduleTests.start(store)
            let read = try await store.reads.read(
                .init(stream: Streams.collaboration(id), account: nil), client: client, logger: store.logger)
            #expect(read.subject == nil)
            #expect(read.stream?.version == 1)
            #expect(try await client.query("SELECT count(*) FROM ledger_subjects").decode(Int64.self).reduce(0) { $1 } == 0)
        }
    }

    static func databaseNow(_ client: PostgresClient) async throws -> Date {
        let rows = try await client.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::int8")
        for try await micros in rows.decode(Int64.self) { return RecordedTime.date(micros: micros) }
        throw CancellationError()
    }
}
