import Foundation
import LedgerDomain
import LedgerLog
import LedgerStore
import LedgerTestSupport
import PostgresNIO
import Testing

@Suite("Append-only and hash chain")
struct IntegrityTests {
    @Test("UPDATE, DELETE and TRUNCATE on the events table are refused by the database")
    func appendOnly() async throws {
        try await withTestStore { store, client, _ in
            _ = try await store.append(.init(streamId: "s", expectedVersion: .noStream, events: [event(), event()]))
            // The test role is a superuser: the triggers hold whatever the role.
            await #expect(throws: PSQLError.self) { try await client.query("UPDATE ledger_events SET event_type = 'X'") }
            await #expect(throws: PSQLError.self) { try await client.query("DELETE FROM ledger_events WHERE position = 1") }
            await #expect(throws: PSQLError.self) { try await client.query("TRUNCATE ledger_events") }
            #expect(try await count(client) == 2)
            #expect(try await store.readAll(after: 0, limit: 10).allSatisfy { $0.type == "Tested" })
        }
    }

    @Test("log verify passes on an intact log and names the first tampered position")
    func verifyChain() async throws {
        try await withTestStore { store, client, _ in
            for i in 0..<5 {
                _ = try await store.append(.init(streamId: "s\(i % 2)", expectedVersion: .any, events: [event("E", i), event("F", i)]))
            }
            let intact = try await LogVerification(store: store, batchSize: 3).run()
            #expect(intact.failure == nil)
            #expect(intact.checked == 10 && intact.headPosition == 10)

            try await client.query("ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_update")
            try await client.query(#"UPDATE ledger_events SET data = '{"n":99}' WHERE position = 7"#)
            try await client.query("ALTER TABLE ledger_events ENABLE TRIGGER ledger_events_no_update")
            let tampered = try await LogVerification(store: store, batchSize: 3).run()
            #expect(tampered.failure == HashChain.Failure(position: 7, reason: .hashMismatch))
            #expect(tampered.checked == 6)
        }
    }

    @Test("non-ASCII streams, types and content chain in the database as log verify computes them in Swift")
    func nonASCIIChain() async throws {
        try await withTestStore { store, _, _ in
            for i in 0..<4 {
                _ = try await store.append(
                    .init(
                        streamId: "strøm-\(i % 2)", expectedVersion: .any,
                        events: [NewEvent(type: "Tésted", data: #"{"n":"é😀 \#(i)"}"#, metadata: #"{"actor":"tëst"}"#)]))
            }
            let report = try await LogVerification(store: store).run()
            #expect(report.failure == nil && report.checked == 4)
        }
    }

    @Test("log verify notices a deleted event and a rewritten tail")
    func verifyMissing() async throws {
        try await withTestStore { store, client, _ in
            for i in 0..<4 {
                _ = try await store.append(.init(streamId: "s", expectedVersion: .any, events: [event("E", i)]))
            }
            try await client.query("ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_delete")
            try await client.query("DELETE FROM ledger_events WHERE position = 2")
            let report = try await LogVerification(store: store).run()
            #expect(report.failure == HashChain.Failure(position: 2, reason: .missing(found: 3)))

            try await client.query("DELETE FROM ledger_events WHERE position >= 3")
            try await client.query("ALTER TABLE ledger_events ENABLE TRIGGER ledger_events_no_delete")
            let truncated = try await LogVerification(store: store).run()
            #expect(truncated.failure?.position == 2)
        }
    }
}
