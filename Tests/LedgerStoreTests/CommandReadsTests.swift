import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import LedgerStore

/// The commands' reads, grouped: each read in a group gets its own stream, its own caller's
/// pseudonym and the database's time, whatever else shared its statement.
@Suite("Command reads, grouped")
struct CommandReadsTests {
    /// 80 reads queued behind one another go as groups (fewer statements than reads, more than the
    /// 64 a group holds), and each gets its own stream (or none), its own pseudonym (made once for
    /// an account read twice) and the database's time.
    @Test("80 queued reads go as groups of at most 64, each with its own stream, pseudonym and database time")
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
            let statementsBefore = store.reads.statements.load(ordering: .relaxed)
            let answers = try await Self.queuedBehindLock(settings, client, store.logger) {
                try await withThrowingTaskGroup(of: (Int, CommandReads.Read).self) { group in
                    for i in 0..<80 {
                        let stream = i % 4 == 3 ? "collaboration-missing-\(i)" : names[i % 3]
                        group.addTask { (i, try await store.reads.read(.init(stream: stream, account: "reader-\(i % 50)"))) }
                    }
                    return try await group.reduce(into: [Int: CommandReads.Read]()) { $0[$1.0] = $1.1 }
                }
            }
            let after = try await Self.databaseNow(client)
            #expect(answers.count == 80)
            for (i, read) in answers {
                if i % 4 == 3 {
                    #expect(read.stream == nil, "\(i): a stream with no row")
                } else {
                    #expect(read.stream?.version == versions[names[i % 3]], "\(i): its own stream's version")
                }
                #expect(
                    read.subject == (try await Subjects(store: store).existing("reader-\(i % 50)")),
                    "\(i): its own caller's pseudonym")
                #expect(read.now >= before && read.now <= after, "\(i): the database's time of its read")
            }
            #expect(Set(answers.values.compactMap(\.subject)).count == 50)
            let statements = store.reads.statements.load(ordering: .relaxed) - statementsBefore
            #expect(statements >= 2 && statements < 80, "\(statements) statements for 80 reads")
        }
    }

    @Test("a read with no account gets no pseudonym, and none is made")
    func noAccount() async throws {
        try await withTestStore { store, client, _ in
            let id = try await ExpiryScheduleTests.start(store)
            let read = try await store.reads.read(.init(stream: Streams.collaboration(id), account: nil))
            #expect(read.subject == nil)
            #expect(read.stream?.version == 1)
            #expect(try await client.query("SELECT count(*) FROM ledger_subjects").decode(Int64.self).reduce(0) { $1 } == 0)
        }
    }

    @Test("a read that cannot succeed fails alone, its group answered; an empty account or stream id is refused")
    func failsAlone() async throws {
        try await withTestStore { store, client, settings in
            // Longer than a btree entry may be once compressed: ledger_subject's insert fails.
            let refused = String(
                (0..<6_000).map { _ in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".randomElement()! })
            let answers = try await Self.queuedBehindLock(settings, client, store.logger) {
                await withTaskGroup(of: (String, Result<String?, any Error>).self) { group in
                    for account in ["first"] + (1...10).map({ "reader-\($0)" }) + [refused] {
                        group.addTask {
                            do {
                                return (account, .success(try await store.reads.read(.init(stream: nil, account: account)).subject))
                            } catch { return (account, .failure(error)) }
                        }
                    }
                    return await group.reduce(into: [String: Result<String?, any Error>]()) { $0[$1.0] = $1.1 }
                }
            }
            #expect(answers.count == 12)
            for (account, answer) in answers where account != refused {
                #expect(try answer.get() != nil, "\(account): answered")
            }
            #expect(throws: (any Error).self, "the account the table refuses") { try answers[refused]!.get() }
            await #expect(throws: StoreError.self) { try await store.reads.read(.init(stream: nil, account: "")) }
            await #expect(throws: StoreError.self) { try await store.reads.read(.init(stream: "", account: "someone")) }
            #expect(try await Subjects(store: store).existing("someone") == nil, "a refused read makes no pseudonym")
        }
    }

    /// Runs `reads` while another session holds `ledger_subjects` locked, so the first statement
    /// (its new pseudonyms need an insert) waits and the other reads queue behind it; lets go once
    /// a statement of this database waits on the lock, and returns what `reads` answered.
    static func queuedBehindLock<T: Sendable>(
        _ settings: DatabaseSettings, _ client: PostgresClient, _ logger: Logger, _ reads: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withClient(settings) { holderClient in
            try await holderClient.withConnection { holder in
                try await holder.query("BEGIN", logger: logger)
                try await holder.query("LOCK TABLE ledger_subjects IN EXCLUSIVE MODE", logger: logger)
                let running = Task { try await reads() }
                try await waitUntil(timeout: .seconds(10), "a read waiting on the lock") {
                    try await client.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                    ).decode(Int64.self).reduce(0) { $1 } >= 1
                }
                try await holder.query("COMMIT", logger: logger)
                return try await running.value
            }
        }
    }

    static func databaseNow(_ client: PostgresClient) async throws -> Date {
        let rows = try await client.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::int8")
        for try await micros in rows.decode(Int64.self) { return RecordedTime.date(micros: micros) }
        throw CancellationError()
    }
}
