import Foundation
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import PostgresNIO
import Testing

func event(_ type: String = "Tested", _ n: Int = 0) -> NewEvent {
    NewEvent(type: type, data: #"{"n":\#(n)}"#, metadata: #"{"actor":"test"}"#)
}

func count(_ client: PostgresClient) async throws -> Int64 {
    let rows = try await client.query("SELECT count(*) FROM ledger_events")
    for try await n in rows.decode(Int64.self) { return n }
    return -1
}

@Suite("Event store")
struct EventStoreTests {
    @Test("append, read stream, read all, head")
    func appendAndRead() async throws {
        try await withTestStore { store, _, _ in
            let first = try await store.append(.init(streamId: "s1", expectedVersion: .noStream, events: [event("A", 1), event("B", 2)]))
            #expect(first.firstPosition == 1 && first.lastPosition == 2 && first.version == 2 && !first.duplicate)
            let second = try await store.append(.init(streamId: "s2", expectedVersion: .noStream, events: [event("C", 3)], state: #"{"x":1}"#))
            #expect(second.firstPosition == 3 && second.version == 1)
            let third = try await store.append(.init(streamId: "s1", expectedVersion: .exact(2), events: [event("D", 4)]))
            #expect(third.firstPosition == 4 && third.version == 3)

            let s1 = try await store.readStream("s1", afterVersion: 0)
            #expect(s1.map(\.type) == ["A", "B", "D"])
            #expect(s1.map(\.version) == [1, 2, 3])
            #expect(s1[0].data == #"{"n":1}"#)
            #expect(s1[0].metadata == #"{"actor":"test"}"#)
            let all = try await store.readAll(after: 1, limit: 10)
            #expect(all.map(\.position) == [2, 3, 4])
            #expect(try await store.readAll(after: 0, limit: 2).map(\.position) == [1, 2])
            let head = try await store.head()
            #expect(head.position == 4)
            #expect(head.hash == all.last!.hash)
            let state = try await store.streamState("s2")
            #expect(state == StreamState(version: 1, state: #"{"x":1}"#, position: 3))
            #expect(try await store.streamState("nope") == nil)
        }
    }

    @Test("an append at the wrong expected version is a typed conflict and stores nothing")
    func versionConflict() async throws {
        try await withTestStore { store, client, _ in
            _ = try await store.append(.init(streamId: "s", expectedVersion: .noStream, events: [event()]))
            let error = try await #require(throws: StoreError.self) {
                try await store.append(.init(streamId: "s", expectedVersion: .noStream, events: [event()]))
            }
            #expect(error.isVersionConflict)
            #expect(error.actualVersion == 1)
            await #expect(throws: StoreError.self) {
                try await store.append(.init(streamId: "s", expectedVersion: .exact(5), events: [event()]))
            }
            #expect(try await count(client) == 1)
            // .any skips the check.
            let any = try await store.append(.init(streamId: "s", expectedVersion: .any, events: [event()]))
            #expect(any.version == 2)
        }
    }

    @Test("concurrent appends racing for the same version: exactly one wins")
    func racingAppends() async throws {
        try await withTestStore { store, client, _ in
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<20 {
                    group.addTask {
                        do {
                            _ = try await store.append(.init(streamId: "race", expectedVersion: .noStream, events: [event("E", i)]))
                            return true
                        } catch let error as StoreError where error.isVersionConflict {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            #expect(try await count(client) == 1)
        }
    }

    @Test("a retried append with the same event ids is not stored twice")
    func idempotentRetry() async throws {
        try await withTestStore { store, client, _ in
            let events = [event("A"), event("B")]
            let first = try await store.append(.init(streamId: "s", expectedVersion: .noStream, events: events))
            _ = try await store.append(.init(streamId: "other", expectedVersion: .noStream, events: [event()]))
            // The retry would conflict on version, but it is recognised by its ids first.
            let retry = try await store.append(.init(streamId: "s", expectedVersion: .noStream, events: events))
            #expect(retry.duplicate)
            #expect(retry.firstPosition == first.firstPosition && retry.lastPosition == first.lastPosition)
            #expect(retry.version == first.version)
            #expect(try await count(client) == 3)
            // The same id under another stream is refused, not silently merged.
            let mismatch = try await #require(throws: StoreError.self) {
                try await store.append(.init(streamId: "elsewhere", expectedVersion: .any, events: [events[0]]))
            }
            #expect(mismatch.isIdempotencyMismatch)
            #expect(try await count(client) == 3)
        }
    }

    @Test("bad input to append is refused alone, without failing other appends")
    func invalidAppend() async throws {
        try await withTestStore { store, client, _ in
            await #expect(throws: StoreError.self) {
                try await store.append(.init(streamId: "s", expectedVersion: .any, events: [NewEvent(type: "X", data: "{not json")]))
            }
            await #expect(throws: StoreError.self) {
                try await store.append(.init(streamId: "s", expectedVersion: .any, events: []))
            }
            await #expect(throws: StoreError.self) {
                try await store.append(.init(streamId: "s\u{0}", expectedVersion: .any, events: [event()]))
            }
            let stored = try await count(client)
            #expect(stored == 0)
        }
    }
}
