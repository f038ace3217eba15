import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import LedgerProjections

@Suite("Projections")
struct ProjectionTests {
    @Test("the projections' status (every worker's lag gauges) is not JIT-compiled on a fresh database")
    func statusNotCompiled() async throws {
        try await withTestStore { _, client, _ in
            // The server compiles a statement whose estimated cost passes jit_above_cost.
            #expect(try await client.query("SHOW jit").collect().first?.decode(String.self) == "on")
            var plan = ""
            for try await line in try await client.query(
                PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, FORMAT JSON) " + ProjectionQueries.statusSQL)
            )
            .decode(String.self) {
                plan += line
            }
            #expect(plan.contains("\"Plan\""))
            #expect(!plan.contains("\"JIT\""), "\(plan)")
            #expect(try await ProjectionQueries.status(client: client, logger: Logger(label: "test")).count == Projection.allCases.count)
        }
    }

    @Test("views equal a fold of the log after concurrent writers, now and at earlier positions (time travel)")
    func viewsEqualFold() async throws {
        try await withTestStore { store, client, _ in
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            let worker = ProjectorWorker(client: client, events: events, logger: logger, batchSize: 97)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await events.run() }
                group.addTask { try await worker.run() }
                defer { group.cancelAll() }
                // Writers and the projector run at the same time.
                try await writeCollaborations(store, count: 40, seed: 1)
                try await caughtUp(client)
            }
            let h = try await head(client)
            #expect(h >= 40 * 30)
            let folded = try await foldedMembers(store)
            #expect(try await viewMembers(client) == folded)
            for position in [h / 5, h / 3, h / 2, 2 * h / 3, h - 3] {
                #expect(
                    withoutRemoved(try await viewMembers(client, at: position))
                        == withoutRemoved(try await foldedMembers(store, upTo: position)),
                    "time travel to \(position)")
            }
            // Collaborations and highlights: one row per started collaboration and per posted notice.
            let counts = try await client.query(
                """
                SELECT (SELECT count(*) FROM proj_collaborations), (SELECT count(*) FROM ledger_events WHERE event_type = 'CollaborationStarted'),
                       (SELECT count(*) FROM proj_highlights), (SELECT count(*) FROM ledger_events WHERE event_type = 'HighlightPosted')
                """)
            for try await (c, cs, hl, hs) in counts.decode((Int64, Int64, Int64, Int64).self) {
                #expect(c == cs && c == 40)
                #expect(hl == hs && hl > 0)
            }
        }
    }

    @Test("the view audit finds views equal to the fold, and names each view row that a bug changed or lost")
    func viewAudit() async throws {
        try await withTestStore { store, client, _ in
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            let worker = ProjectorWorker(client: client, events: events, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await events.run() }
                group.addTask { try await worker.run() }
                defer { group.cancelAll() }
                try await writeCollaborations(store, count: 12, seed: 7)
                try await caughtUp(client)
            }
            let audit = ViewAudit(client: client, store: store, logger: logger)
            let clean = try await audit.run()
            #expect(clean.consistent, "\(clean.details)")
            #expect(clean.collaborations == 12)
            #expect(clean.positions[.membership] == (try await head(client)))
            // A bug's traces: one identity in the wrong state, one notice lost, one collaboration invented.
            try await client.query(
                """
                UPDATE proj_members SET state = CASE state WHEN 'removed' THEN 'granted' ELSE 'removed' END
                WHERE (collaboration_id, root_hash) = (SELECT collaboration_id, root_hash FROM proj_members ORDER BY position LIMIT 1)
                """)
            try await client.query("DELETE FROM proj_highlights WHERE position = (SELECT min(position) FROM proj_highlights)")
            try await client.query(
                """
                INSERT INTO proj_collaborations SELECT '00000000-0000-4000-8000-000000000000', local_identifier, title,
                  initiator_handle, initiator_name, owner, universal_link, share_options, started_at, started_position
                FROM proj_collaborations LIMIT 1
                """)
            let broken = try await audit.run()
            #expect(!broken.consistent)
            #expect(broken.diverged == 3, "\(broken.details)")
            #expect(broken.details.contains { $0.hasPrefix("membership of ") })
            #expect(broken.details.contains { $0.contains("has no row in proj_highlights") })
            #expect(broken.details.contains { $0.contains("00000000-0000-4000-8000-000000000000") })
        }
    }

    @Test("a projector that dies mid-batch leaves nothing half-applied; another takes over when its lease ends")
    func crashAndTakeover() async throws {
        try await withTestStore { store, client, _ in
            try await writeCollaborations(store, count: 8, seed: 2)
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            struct Died: Error {}
            let dying = ProjectorWorker(
                client: client, events: events, logger: logger, id: "dying", batchSize: 50, leaseDuration: .seconds(60),
                hooks: .init(afterApply: { projection, from, _ in if projection == .membership && from >= 100 { throw Died() } }))
            // It applies batches until the one that dies half-way through (rows written, not committed).
            var died = false
            while !died {
                do { _ = try await dying.step(.membership) } catch is Died { died = true }
            }
            let stuck = try await projection(client, .membership).position
            #expect(stuck == 100)
            let history = try await client.query("SELECT coalesce(max(position), 0) FROM proj_access_history")
            for try await max in history.decode(Int64.self) { #expect(max <= 100, "nothing past the checkpoint is in the view") }

            // The owner is gone: another worker cannot take it while its lease holds, and takes
            // over once the lease has run out (run out here rather than waited out: no timing bet).
            let survivor = ProjectorWorker(client: client, events: events, logger: logger, id: "survivor", batchSize: 50)
            #expect(try await survivor.step(.membership) == false, "the dead owner's lease still holds")
            try await client.query("UPDATE ledger_projections SET lease_until = now() - interval '1 second' WHERE name = 'membership'")
            #expect(try await survivor.step(.membership), "takeover once the lease has run out")
            while try await survivor.step(.membership) {}
            #expect(try await projection(client, .membership).position == (try await head(client)))
            #expect(try await viewMembers(client) == (try await foldedMembers(store)))
        }
    }

    @Test("several workers: each projection is applied by one at a time, every range exactly once")
    func singleOwner() async throws {
        try await withTestStore { store, client, _ in
            let ranges = Mutex<[Projection: [(String, Int64, Int64)]]>([:])
            let hooks = ProjectorWorker.Hooks(committed: { worker, projection, from, to in
                ranges.withLock { $0[projection, default: []].append((worker, from, to)) }
            })
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await events.run() }
                for w in 0..<3 {
                    let worker = ProjectorWorker(
                        client: client, events: events, logger: logger, id: "w\(w)", batchSize: 23, leaseDuration: .seconds(1),
                        pollInterval: .milliseconds(50), hooks: hooks)
                    group.addTask { try await worker.run() }
                }
                defer { group.cancelAll() }
                try await writeCollaborations(store, count: 12, seed: 3)
                try await caughtUp(client)
            }
            let h = try await head(client)
            for projection in Projection.allCases {
                let applied = ranges.withLock { $0[projection] ?? [] }.sorted { $0.1 < $1.1 }
                var next: Int64 = 0
                for (_, from, to) in applied {
                    #expect(from == next, "\(projection): ranges are contiguous and never overlap")
                    next = to
                }
                #expect(next == h)
            }
            #expect(try await viewMembers(client) == (try await foldedMembers(store)))
        }
    }

    @Test("an event a projection cannot apply stops it at that position, visibly; the others go on")
    func poisonEvent() async throws {
        try await withTestStore { store, client, _ in
            try await writeCollaborations(store, count: 4, seed: 4)
            let stream = Streams.collaboration(UUID().uuidString.lowercased())
            // An IdentityAdded without a root hash: the membership fold cannot place it.
            let poison = try await store.append(
                .init(
                    streamId: stream, expectedVersion: .any,
                    events: [NewEvent(type: "IdentityAdded", data: #"{"note":"no root hash"}"#, metadata: "{}")]))
            try await writeCollaborations(store, count: 4, seed: 5)
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            let worker = ProjectorWorker(client: client, events: events, logger: logger, batchSize: 40)
            for _ in 0..<200 {
                var busy = false
                for p in Projection.allCases { busy = try await worker.step(p) || busy }
                if !busy { break }
            }
            let membership = try await projection(client, .membership)
            #expect(membership.status == "stopped")
            #expect(membership.errorPosition == poison.firstPosition)
            #expect(membership.position == poison.firstPosition - 1, "everything before the poison is applied")
            let statuses = try await ProjectionQueries.status(client: client, logger: logger)
            let shown = statuses.first { $0.name == "membership" }
            #expect(shown?.status == "stopped" && shown?.error?.contains("root_hash") == true, "\(String(describing: shown?.error))")
            #expect(try await projection(client, .collaborations).position == (try await head(client)))
            #expect(try await worker.step(.membership) == false, "a stopped projection is not taken up again")
        }
    }

    @Test("rebuild while writes continue: the old view serves throughout, the swapped view equals the fold")
    func rebuildUnderWrites() async throws {
        try await withTestStore { store, client, _ in
            try await writeCollaborations(store, count: 30, seed: 6)
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            let worker = ProjectorWorker(client: client, events: events, logger: logger, batchSize: 200, pollInterval: .milliseconds(50))
            let readerErrors = Tally()
            let reads = Tally()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await events.run() }
                group.addTask { try await worker.run() }
                try await caughtUp(client)
                // Readers of the current view, and more writers, while the rebuild runs.
                group.addTask {
                    while !Task.isCancelled {
                        do {
                            let rows = try await client.query("SELECT count(*) FROM proj_members")
                            for try await n in rows.decode(Int64.self) where n > 0 { reads.add() }
                        } catch {
                            if !Task.isCancelled { readerErrors.add() }
                        }
                    }
                }
                async let writing: Void = writeCollaborations(store, count: 16, seed: 7)
                let report = try await ProjectionRebuild(client: client, logger: logger, chunk: 500).run(.membership)
                #expect(report.position > 0)
                try await writing
                try await caughtUp(client)
                group.cancelAll()
            }
            #expect(readerErrors.count == 0, "the view answered throughout")
            #expect(reads.count > 0)
            #expect(try await viewMembers(client) == (try await foldedMembers(store)))
            let leftovers = try await client.query(
                "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'proj_%_next' OR tablename LIKE 'proj_%_old'")
            for try await n in leftovers.decode(Int64.self) { #expect(n == 0) }
        }
    }
}

extension ProjectionTests {
    @Test("a rebuild (bulk, two connections) gives every row and column the worker built, and the indexes back")
    func rebuildEqualsIncremental() async throws {
        try await withTestStore { store, client, _ in
            try await writeCollaborations(store, count: 40, seed: 11)
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            let worker = ProjectorWorker(client: client, events: events, logger: logger, batchSize: 37, pollInterval: .milliseconds(50))
            let tables = ["proj_collaborations", "proj_access_history", "proj_members", "proj_highlights"]
            func snapshot() async throws -> [String: [String]] {
                var result: [String: [String]] = [:]
                for table in tables {
                    let rows = try await client.query(
                        PostgresQuery(unsafeSQL: "SELECT t::text FROM \(table) t ORDER BY t::text COLLATE \"C\""))
                    for try await row in rows.decode(String.self) { result[table, default: []].append(row) }
                    // Index definitions, names aside.
                    let indexes = try await client.query(
                        "SELECT regexp_replace(indexdef, 'INDEX \\S+ ON', 'INDEX ON') FROM pg_indexes WHERE tablename = \(table) ORDER BY 1"
                    )
                    for try await index in indexes.decode(String.self) { result[table + " indexes", default: []].append(index) }
                    let keys = try await client.query(
                        "SELECT contype::text FROM pg_constraint WHERE conrelid = \(table)::regclass AND contype IN ('p', 'u') ORDER BY 1")
                    for try await key in keys.decode(String.self) { result[table + " keys", default: []].append(key) }
                }
                return result
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await events.run() }
                group.addTask { try await worker.run() }
                try await caughtUp(client)
                group.cancelAll()
            }
            let incremental = try await snapshot()
            #expect((incremental["proj_members"]?.count ?? 0) > 100)
            #expect(incremental["proj_members keys"] == ["p"])
            for projection in Projection.allCases {
                _ = try await ProjectionRebuild(client: client, logger: logger, chunk: 150, connections: 2).run(projection)
            }
            let rebuilt = try await snapshot()
            for key in incremental.keys.sorted() {
                #expect(rebuilt[key] == incremental[key], "\(key) differs after the rebuild")
            }
            // Times survive the fold exactly: each member's times are its events' commit times.
            let wrong = try await client.query(
                """
                SELECT count(*) FROM proj_members m
                LEFT JOIN ledger_events i ON i.position = m.invited_position
                LEFT JOIN ledger_events g ON g.position = m.granted_position
                WHERE m.invited_at IS DISTINCT FROM i.recorded_at OR m.granted_at IS DISTINCT FROM g.recorded_at
                """)
            for try await n in wrong.decode(Int64.self) { #expect(n == 0) }
            #expect(try await viewMembers(client) == (try await foldedMembers(store)))
        }
    }
}

final class Tally: Sendable {
    private let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}
