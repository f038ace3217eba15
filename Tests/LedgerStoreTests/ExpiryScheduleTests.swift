import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import PostgresNIO
import Testing

/// The expiry service works from the stream rows: each collaboration's next window end
/// (`ledger_streams.next_due_at`) is written by the append that changes its state, and the append
/// wakes the service (Migrations/functions/ledger_stream_next_due.sql). No projector runs here, so
/// no view could nominate anything.
@Suite("Expiry scheduled from the streams")
struct ExpiryScheduleTests {
    @Test("the stream row keeps the earliest end of a current window; ledger_next_due agrees with the decision")
    func nextDueOnTheRow() async throws {
        try await withTestStore { store, client, _ in
            let collaborations = CollaborationStreams(store: store)
            let id = try await Self.start(store)
            #expect(try await Self.nextDue(id, client) == nil, "no window yet")

            let now = Date()
            let (early, late) = (now.addingTimeInterval(3_600), now.addingTimeInterval(7_200))
            _ = try await collaborations.decideAndAppend(id) { _ in
                .init(
                    events: [
                        .identityAdded(.init(rootHash: try Self.hash(1), window: try AccessWindow(notBefore: nil, notAfter: late))),
                        .identityAdded(.init(rootHash: try Self.hash(2), window: try AccessWindow(notBefore: nil, notAfter: early))),
                        .identityAdded(.init(rootHash: try Self.hash(3), window: AccessWindow(stored: nil, nil))),
                    ], metadata: EventMetadata(actor: "owner"))
            }
            let due = try #require(try await Self.nextDue(id, client))
            #expect(RFC3339.micros(due) == RFC3339.micros(early), "the earliest end of a current window")
            // The rule in SQL and the decision in Swift pick the same instant: nothing is due a
            // microsecond before it, and something is at it.
            let state = try await collaborations.current(id).state
            #expect(CollaborationDecisions.expiries(state: state, now: RecordedTime.date(micros: RFC3339.micros(due) - 1)).isEmpty)
            #expect(CollaborationDecisions.expiries(state: state, now: due).count == 1)

            // An append that leaves the state as it was (none given) leaves the row's end too.
            _ = try await store.append(
                .init(
                    streamId: Streams.collaboration(id), expectedVersion: .any,
                    events: [
                        CollaborationEvent.highlightPosted(.init(kind: .change, trigger: nil, mentionedRootHash: nil, account: "owner"))
                            .newEvent(metadata: .init())
                    ]))
            #expect(try await Self.nextDue(id, client).map(RFC3339.micros) == RFC3339.micros(early))

            // Removing the identity of the earliest window moves the end to the next one; removing
            // the last windowed identity clears it.
            _ = try await collaborations.decideAndAppend(id) { _ in
                .init(events: [.identityRemoved(.init(rootHash: try Self.hash(2), account: nil))], metadata: EventMetadata(actor: "owner"))
            }
            #expect(try await Self.nextDue(id, client).map(RFC3339.micros) == RFC3339.micros(late))
            _ = try await collaborations.decideAndAppend(id) { _ in
                .init(events: [.identityRemoved(.init(rootHash: try Self.hash(1), account: nil))], metadata: EventMetadata(actor: "owner"))
            }
            #expect(try await Self.nextDue(id, client) == nil)
        }
    }

    @Test("the overdue count reads the stream rows, not a view: current windows over a second past their end")
    func overdueFromTheRows() async throws {
        try await withTestStore { store, client, _ in
            let collaborations = CollaborationStreams(store: store)
            let id = try await Self.start(store)
            let now = Date()
            let ended = { (ago: TimeInterval) in try AccessWindow(notBefore: nil, notAfter: now.addingTimeInterval(-ago)) }
            _ = try await collaborations.decideAndAppend(id) { _ in
                .init(
                    events: [
                        .identityAdded(.init(rootHash: try Self.hash(1), window: try ended(60))),
                        .identityAdded(.init(rootHash: try Self.hash(2), window: try ended(30))),
                        .identityAdded(.init(rootHash: try Self.hash(3), window: try ended(45))),
                        .identityAdded(
                            .init(
                                rootHash: try Self.hash(4),
                                window: try AccessWindow(notBefore: nil, notAfter: now.addingTimeInterval(3_600)))),
                        .identityAdded(.init(rootHash: try Self.hash(5), window: AccessWindow(stored: nil, nil))),
                        .identityRemoved(.init(rootHash: try Self.hash(3), account: nil)),
                    ], metadata: EventMetadata(actor: "owner"))
            }
            // No projector has run: the membership view is empty, the streams know.
            #expect(try await Self.overdue(client) == 2, "two current windows past their end; one removed, one ahead, one unbounded")
            // The next command on the collaboration expires them first: nothing is overdue.
            _ = try await collaborations.decideAndAppend(id) { _ in
                .init(events: [.identityRemoved(.init(rootHash: try Self.hash(4), account: nil))], metadata: EventMetadata(actor: "owner"))
            }
            #expect(try await Self.overdue(client) == 0)
        }
    }

    @Test("a decoded state is reused only while its stream's row has its version; after an append it is reread")
    func decodedByVersion() async throws {
        try await withTestStore { store, client, _ in
            let collaborations = CollaborationStreams(store: store)
            let id = try await Self.start(store)
            let read = try #require(try await collaborations.currents([id])[id])
            // A stand-in at the row's version: what the service decoded or wrote at that version.
            var memo = read
            memo.state.title = "decoded before"
            let same = try #require(try await collaborations.currents([id], decoded: [id: memo])[id])
            #expect(same.state.title == "decoded before", "the row's version names the state: not read again")
            #expect(same.version == read.version && same.position == read.position)
            _ = try await collaborations.decideAndAppend(id) { _ in
                .init(
                    events: [.identityAdded(.init(rootHash: try Self.hash(1), window: AccessWindow(stored: nil, nil)))],
                    metadata: EventMetadata(actor: "owner"))
            }
            let moved = try #require(try await collaborations.currents([id], decoded: [id: memo])[id])
            #expect(moved.version == read.version + 1)
            #expect(moved.state.title == read.state.title && moved.state.identities.count == 1, "a newer version: the row's state")
        }
    }

    static func overdue(_ client: PostgresClient) async throws -> Int64 {
        let rows = try await client.query("SELECT ledger_expiry_overdue(now())")
        for try await count in rows.decode(Int64.self) { return count }
        throw StoreError.invalidRequest("no row")
    }

    /// No projector: a window set by a command is expired at its end (never before); notifications
    /// from any login only wake the service.
    @Test("no projector: a command's window expires at its end (never before); any login's NOTIFY only wakes")
    func expiredFromTheRow() async throws {
        try await withTestStore { store, client, _ in
            let logger = Logger(label: "expiry-schedule-test")
            let hub = NotificationHub(client: client, channel: ExpiryService.channel, logger: logger)
            let service = ExpiryService(client: client, store: store, wake: hub, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await hub.run() }
                group.addTask { try await service.run() }
                defer { group.cancelAll() }
                try await waitUntil(timeout: .seconds(60), "LISTEN up") { hub.isListening }
                try await waitUntil(timeout: .seconds(60), "the service holds the lease") {
                    try await AdvisoryLease(key: ExpiryService.leaseKey, client: client, logger: logger).isHeld()
                }

                // A collaboration whose state does not decode, overdue by its row: logged and left
                // alone, and the others' windows still expire.
                let broken = Streams.collaboration(UUID().uuidString.lowercased())
                try await client.query(
                    """
                    INSERT INTO ledger_streams (stream_id, version, state, position)
                    VALUES (\(broken), 1, '{"identities":{"x":{"status":"invited","notAfter":"2020-01-01T00:00:00.000000Z"}}}', 0)
                    """)
                // What any database login could send: wakes the service, decides nothing.
                try await client.query(
                    "SELECT pg_notify('ledger_expiry', 'not-an-id'), pg_notify('ledger_expiry', \(UUID().uuidString.lowercased()))")
                let id = try await Self.start(store)
                let window = try AccessWindow(notBefore: nil, notAfter: Date().addingTimeInterval(1.5))
                _ = try await CollaborationStreams(store: store).decideAndAppend(id) { _ in
                    .init(
                        events: [.identityAdded(.init(rootHash: try Self.hash(9), window: window))], metadata: EventMetadata(actor: "owner")
                    )
                }
                try await waitUntil(timeout: .seconds(30), "the AccessExpired the service appends") {
                    try await store.readStream(Streams.collaboration(id)).contains { $0.type == "AccessExpired" }
                }
                let events = try await store.readStream(Streams.collaboration(id))
                let expired = events.filter { $0.type == "AccessExpired" }
                #expect(expired.count == 1)
                #expect(expired.allSatisfy { $0.recordedAtMicros >= window.notAfterMicros! }, "never before the window's end")
                #expect(try await Self.nextDue(id, client) == nil, "the expiry's append cleared the row's end")
                #expect(try await store.readStream(broken).isEmpty, "nothing appended to the broken one")
                let view = try await client.query("SELECT count(*) FROM proj_members").decode(Int64.self).reduce(0) { $1 }
                #expect(view == 0, "no projector: the view had nothing to nominate")
            }
        }
    }

    @Test("a database migrated from before 0030: the streams it holds get their next end from their state")
    func backfilled() async throws {
        let settings = try await TestCluster.shared.makeEmptyDatabase()
        try await withClient(settings) { client in
            let logger = Logger(label: "m")
            let all = try Migrator(client: client, logger: logger)
            // The schema as 0029 left it: the function files that need 0030's column (or a later
            // table: ledger_holds reads 0034's) are not there yet.
            let newer: Set<String> = [
                "ledger_next_due.sql", "ledger_stream_next_due.sql", "ledger_next_expiry.sql", "ledger_expiry_overdue.sql",
                "ledger_holds.sql",
            ]
            try await Migrator(
                client: client, logger: logger, migrations: all.migrations.filter { $0.name < "0030" },
                functions: all.functions.filter { !newer.contains($0.name) }
            ).migrate()
            let state =
                #"{"collaborationId":"c","grants":{},"identities":{"#
                + #""a":{"notAfter":"2031-01-01T00:00:00.000000Z","status":"expired","windows":1},"#
                + #""b":{"notAfter":"2032-06-01T12:00:00.250000Z","status":"granted","account":"x","windows":1},"#
                + #""c":{"notAfter":"2033-01-01T00:00:00.000000Z","status":"invited","windows":1},"#
                + #""d":{"status":"invited"}},"owner":"o","title":"t"}"#
            try await client.query(
                """
                INSERT INTO ledger_streams (stream_id, version, state, position) VALUES
                    ('collaboration-windowed', 1, \(state)::json, 1), ('collaboration-none', 1, '{"identities":{}}', 2), ('other', 1, NULL, 3)
                """)
            try await all.migrate()
            let rows = try await client.query(
                "SELECT stream_id, (extract(epoch FROM next_due_at) * 1000000)::int8 FROM ledger_streams ORDER BY stream_id")
            var dues: [String: Int64?] = [:]
            for try await (stream, micros) in rows.decode((String, Int64?).self) { dues[stream] = micros }
            #expect(dues["collaboration-windowed"] == RecordedTime.micros("2032-06-01T12:00:00.250000Z"), "the earliest current end")
            #expect(dues["collaboration-none"] == .some(nil) && dues["other"] == .some(nil))
        }
    }

    static func hash(_ byte: UInt8) throws -> RootHash { try RootHash(bytes: [UInt8](repeating: byte, count: 32)) }

    static func nextDue(_ id: String, _ client: PostgresClient) async throws -> Date? {
        let rows = try await client.query(
            "SELECT (extract(epoch FROM next_due_at) * 1000000)::int8 FROM ledger_streams WHERE stream_id = \(Streams.collaboration(id))")
        for try await micros in rows.decode(Int64?.self) { return micros.map { RecordedTime.date(micros: $0) } }
        return nil
    }

    /// A started collaboration owned by "owner"; its id.
    static func start(_ store: EventStore) async throws -> String {
        let id = UUID().uuidString.lowercased()
        let command = StartCollaboration(localIdentifier: "l", title: "t", initiatorHandle: "h")
        guard
            case .started(let started) = command.started(
                collaborationId: id, owner: "owner", universalLink: "u", commitments: command.commitments())
        else { throw CancellationError() }
        _ = try await store.append(
            .init(
                streamId: Streams.collaboration(id), expectedVersion: .noStream,
                events: [CollaborationEvent.started(started).newEvent(metadata: .init())], state: CollaborationState(started: started).json)
        )
        return id
    }
}
