import Foundation
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

/// A gate a test opens by hand; waiters resume when it opens.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { s in
                if s.open { return true }
                s.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
    func open() {
        let waiters = state.withLock { s in
            s.open = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume() }
    }
}

@Suite("Log ordering")
struct OrderingTests {
    @Test("a slow appending transaction is never overtaken: readers see no gap and no reordering")
    func slowCommit() async throws {
        let entered = Gate()
        let release = Gate()
        let settings = try await TestCluster.shared.makeDatabase()
        try await withClient(settings) { client in
            // Store A pauses inside its transaction, after writing, before COMMIT.
            let slow = EventStore(
                client: client, logger: Logger(label: "slow"),
                hooks: .init(beforeCommit: { _ in
                    entered.open()
                    await release.wait()
                }))
            // Stores B and C stand for other processes (their own queues and connections).
            let fastB = EventStore(client: client, logger: Logger(label: "b"))
            let fastC = EventStore(client: client, logger: Logger(label: "c"))
            let reader = EventStore(client: client, logger: Logger(label: "reader"))

            let a = Task { try await slow.append(.init(streamId: "a", expectedVersion: .noStream, events: [event("A")])) }
            await entered.wait()
            let b = Task { try await fastB.append(.init(streamId: "b", expectedVersion: .noStream, events: [event("B")])) }
            let c = Task { try await fastC.append(.init(streamId: "c", expectedVersion: .noStream, events: [event("C")])) }

            // Wait until B and C are inside their transactions, queued behind A's head lock.
            try await waitUntil(timeout: .seconds(20), "B and C to wait on the head lock") {
                let rows = try await client.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
                for try await n in rows.decode(Int64.self) { return n == 2 }
                return false
            }
            // A holds position 1 uncommitted: a reader sees nothing, and nothing was acknowledged.
            #expect(try await reader.readAll(after: 0, limit: 100).isEmpty)
            #expect(try await reader.head().position == 0)

            release.open()
            let ra = try await a.value
            let rb = try await b.value
            let rc = try await c.value
            #expect(ra.firstPosition == 1)
            #expect(Set([rb.firstPosition, rc.firstPosition]) == [2, 3])
            let all = try await reader.readAll(after: 0, limit: 100)
            #expect(all.map(\.position) == [1, 2, 3])
            #expect(all.first?.type == "A")
        }
    }

    @Test("8 concurrent writers and a concurrent reader: every event seen exactly once, in order")
    func concurrentWritersAndReader() async throws {
        let writers = 8
        let perWriter = 60
        try await withTestStore { store, client, _ in
            let stores = (0..<4).map { EventStore(client: client, logger: Logger(label: "w\($0)")) }
            let seen = try await withThrowingTaskGroup(of: [RecordedEvent].self) { group in
                for w in 0..<writers {
                    group.addTask {
                        let mine = stores[w % stores.count]
                        for i in 0..<perWriter {
                            _ = try await mine.append(
                                .init(
                                    streamId: "writer-\(w)", expectedVersion: .exact(Int64(i)), events: [event("W\(w)", i)]))
                        }
                        return []
                    }
                }
                group.addTask {
                    // Tails the log the way a projector does: "everything after my checkpoint".
                    var checkpoint: Int64 = 0
                    var collected: [RecordedEvent] = []
                    let deadline = ContinuousClock.now + .seconds(120)
                    while collected.count < writers * perWriter && ContinuousClock.now < deadline {
                        let batch = try await store.readAll(after: checkpoint, limit: 37)
                        collected += batch
                        checkpoint = batch.last?.position ?? checkpoint
                    }
                    return collected
                }
                return try await group.reduce(into: [RecordedEvent]()) { $0 += $1 }
            }
            #expect(seen.count == writers * perWriter)
            #expect(seen.map(\.position) == Array(1...Int64(writers * perWriter)))
            #expect(Set(seen.map(\.eventId)).count == seen.count)
            // Times rise along the log: each append takes its time under the head's lock.
            for (earlier, later) in zip(seen, seen.dropFirst()) {
                #expect(earlier.recordedAtMicros <= later.recordedAtMicros, "the time falls at \(later.position)")
            }
            for w in 0..<writers {
                let versions = seen.filter { $0.streamId == "writer-\(w)" }.map(\.version)
                #expect(versions == Array(1...Int64(perWriter)))
            }
            #expect(try await count(client) == Int64(writers * perWriter))
        }
    }
}
