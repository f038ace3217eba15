import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import LedgerVerifier
import Logging
import PostgresNIO
import Testing

/// SPEC "One clock": a grant is never recorded after its window's end. A proof decided inside
/// the window whose commit comes after the end (the engine held between its read and its
/// commit) is refused by the commit (LP005), read again on the database's clock, and recorded as
/// refused, `access_expired`.
@Suite("A grant recorded inside its window")
struct GrantWindowCommitTests {
    @Test("decided inside the window, committed after its end: the commit refuses it (LP005), the proof is decided again and refused access_expired; no grant recorded")
    func commitAfterTheEnd() async throws {
        try await withAPI { api in
            let (id, people) = try await ProofEngineTests.collaboration(api, people: 1)
            let alice = people[0]
            let end = Date().addingTimeInterval(1.5)
            let window = try AccessWindow(notBefore: nil, notAfter: end)
            _ = try await Collaborations(store: EventStore(client: api.db, logger: Logger(label: "test"))).decideAndAppend(id) { _ in
                .init(events: [.accessWindowChanged(.init(rootHash: alice.rootHash, window: window))], metadata: EventMetadata(actor: "devin"))
            }
            let submission = try await ProofEngineTests.submission(api, id, alice, as: "alice")
            #expect(Date() < end, "the proof is read before the window's end; the test proves nothing otherwise")
            // Held after its first read (inside the window) until the window has ended.
            let (engine, reads) = ProofEngineTests.engine(api.db) {
                try await waitUntil(timeout: .seconds(10), "the window's end") { Date() > end.addingTimeInterval(0.05) }
            }
            let results = await engine.decide(ProofEngineTests.fresh([submission]))
            #expect(ProofEngineTests.reason(results[0]) == "access_expired", "\(results[0])")
            #expect(reads.value == 2, "read again after the commit refused the grant")
            #expect(try await ProofEngineTests.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'AccessGranted'") == 0)
            #expect(try await ProofEngineTests.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'ProofRejected'") == 1)
        }
    }
}
