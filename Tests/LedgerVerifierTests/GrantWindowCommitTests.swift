import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import LedgerVerifier
import Logging
import PostgresNIO
import Synchronization
import Testing

/// SPEC "One clock": a grant is never recorded after its window's end. A proof decided inside
/// the window whose commit comes after the end (the engine held between its read and its
/// commit) is refused by the commit (LP005), read again on the database's clock, and recorded as
/// refused, `access_expired`.
@Suite("A grant recorded inside its window")
struct GrantWindowCommitTests {
    /// Decided inside the window, committed after its end: the commit refuses it (LP005), the proof
    /// is decided again and refused access_expired; no grant recorded.
    @Test("decided inside the window, committed after it: LP005, decided again as access_expired, no grant")
    func commitAfterTheEnd() async throws {
        try await LiveServer.run { api in
            let (id, people) = try await ProofEngineTests.collaboration(api, people: 5)
            let collaborations = CollaborationStreams(store: EventStore(client: api.db, logger: Logger(label: "test")))
            // A loaded machine may read the proof only after a short window has ended (then it is
            // refused at once, which shows nothing of the commit): a longer window, up to five times.
            for (attempt, person) in people.enumerated() {
                let end = Date().addingTimeInterval(Double(attempt + 1) * 2)
                let window = try AccessWindow(notBefore: nil, notAfter: end)
                _ = try await collaborations.decideAndAppend(id) { _ in
                    .init(
                        events: [.accessWindowChanged(.init(rootHash: person.rootHash, window: window))],
                        metadata: EventMetadata(actor: "devin"))
                }
                let submission = try await ProofEngineTests.submission(api, id, person, as: "alice-\(attempt)")
                let firstRead = Mutex<Date?>(nil)
                // Held after its first read until the window has ended.
                let (engine, reads) = ProofEngineTests.engine(api.db) {
                    firstRead.withLock { $0 = $0 ?? Date() }
                    try await waitUntil(timeout: .seconds(30), "the window's end") { Date() > end.addingTimeInterval(0.05) }
                }
                let results = await engine.decide(ProofEngineTests.fresh([submission]))
                guard let read = firstRead.withLock({ $0 }), read < end else { continue }
                #expect(ProofEngineTests.reason(results[0]) == "access_expired", "\(results[0])")
                // At least twice: the expiry service may append the window's AccessExpired between
                // the second read and its append, which is then read once more (a conflict).
                #expect(reads.value >= 2, "read again after the commit refused the grant")
                #expect(
                    try await ProofEngineTests.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'AccessGranted'") == 0)
                #expect(
                    try await ProofEngineTests.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'ProofRejected'") >= 1)
                return
            }
            Issue.record("five windows ended before their proof was read")
        }
    }
}
