import Foundation
import HTTPTypes
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerVerifier
import LedgerWire
import Logging
import PostgresNIO
import Testing

/// Issue 37: a proof request whose account is erased before its verdict can have no verdict
/// event (no event may name a subject that is gone: the commit refuses it, LP004). It is refused
/// on its own, `account_erased`, recorded in its row only, and never holds up anyone else's proof:
/// in split mode (`ledger api` storing, a `VerifierWorker` deciding) and in `ledger serve` (the
/// engine deciding fresh submissions).
@Suite("Erased accounts' proofs")
struct ErasedSubjectTests {
    /// Longer than a production API waits for a verdict by default (LEDGER_VERDICT_WAIT, 5 s), and
    /// long enough for a loaded test machine: the first call waits through the erasure, a second
    /// request and a worker's start (a whole run once took more than 30 s), and a proof stalled
    /// behind the erased one is never decided. An answer ends the wait at once.
    static let verdictWait: Duration = .seconds(120)

    static func erase(_ api: LiveServer, _ account: String) async throws {
        let r = try await api.call(
            .post, "/v1/privacy/erasures", as: "officer", roles: ["privacy"], json: #"{"account":"\#(account)","reason":"TICKET-37"}"#)
        #expect(r.status == .ok, "\(r.raw)")
    }

    static func office(_ db: PostgresClient) -> PrivacyOffice {
        PrivacyOffice(store: EventStore(client: db, logger: Logger(label: "test")))
    }

    static func pending(_ db: PostgresClient) async throws -> Int64 {
        try await ProofEngineTests.count(db, "SELECT count(*) FROM ledger_proof_requests WHERE status = 'pending'")
    }

    static func subjects(_ db: PostgresClient, _ account: String) async throws -> Int64 {
        try await ProofEngineTests.count(db, "SELECT count(*) FROM ledger_subjects WHERE account = \(account)")
    }

    /// The refusal as a 403 says it (a submission's answer or a status poll).
    static func refusedErased(_ r: (status: HTTPResponse.Status, body: JSONValue, raw: String)) -> Bool {
        r.status == .forbidden && r.body.errorCode == "proof_rejected" && r.body["error"]?["reason"]?.string == "account_erased"
    }

    /// Split mode: an account erased while its proof request is pending: its request refused
    /// account_erased without an event, answered to its waiting call and its status URL, never
    /// retried; proofs of other accounts, in its group and after it, decided within the verdict
    /// wait.
    @Test("split mode: a pending request of an erased account refused without an event; others decided in time")
    func splitMode() async throws {
        // `ledger api`: no engine; proofs are stored and their calls wait for a worker's verdict.
        try await LiveServer.run(.api, configuration: .testing { $0.verdictWait = Self.verdictWait }) { api in
            try await withThrowingTaskGroup(of: Void.self) { group in
                try await api.waitListening(VerifierChannels.verdicts)
                let (id, people) = try await ProofEngineTests.collaboration(api, people: 3)
                let (alice, bob, carol) = (people[0], people[1], people[2])

                // No worker yet: alice's proof is stored and her call waits for its verdict; then she is erased.
                async let alicesAnswer = api.verify(id, alice, as: "alice")
                try await waitUntil(timeout: .seconds(60), "alice's request stored") { try await Self.pending(api.db) == 1 }
                var aliceRequest: UUID?
                for try await requestId in try await api.db.query("SELECT request_id FROM ledger_proof_requests").decode(UUID.self) {
                    aliceRequest = requestId
                }
                let alicesRequest = try #require(aliceRequest)
                try await Self.erase(api, "alice")
                #expect(try await Self.subjects(api.db, "alice") == 0)

                // Carol's proof is stored behind alice's: the first sweep takes both in one group.
                async let carolsAnswer = api.verify(id, carol, as: "carol")
                try await waitUntil(timeout: .seconds(60), "carol's request stored") { try await Self.pending(api.db) == 2 }

                // A worker starts, as `ledger verifier` does beside `ledger api`.
                let requests = NotificationHub(client: api.db, channel: VerifierChannels.requests, logger: Logger(label: "test"))
                group.addTask { try await requests.run() }
                group.addTask {
                    try await VerifierWorker(
                        engine: VerifierTests.engine(api.db), requests: VerifierTests.requests(api.db), wake: requests,
                        logger: Logger(label: "test")
                    ).run()
                }
                try await waitUntil(timeout: .seconds(60), "requests LISTEN up") { requests.isListening }

                let carols = try await carolsAnswer
                #expect(carols.status == .ok && carols.body["status"]?.string == "granted", "\(carols.raw)")
                let bobs = try await api.verify(id, bob, as: "bob")
                #expect(bobs.status == .ok && bobs.body["status"]?.string == "granted", "submitted after the erasure: \(bobs.raw)")
                let alices = try await alicesAnswer
                #expect(Self.refusedErased(alices), "her waiting call: \(alices.raw)")

                // Recorded in its row only: refused, no position, no verdict event; nothing pending.
                let rows = try await api.db.query(
                    """
                    SELECT status, reason, decided_position, decided_at IS NOT NULL FROM ledger_proof_requests
                    WHERE request_id = \(alicesRequest)
                    """)
                for try await (status, reason, position, decided) in rows.decode((String, String?, Int64?, Bool).self) {
                    #expect(status == "refused" && reason == "account_erased" && position == nil && decided)
                }
                #expect(try await VerifierTests.verdictEvents(api.db, alicesRequest) == [])
                #expect(try await Self.pending(api.db) == 0)
                #expect(try await Self.subjects(api.db, "alice") == 0, "her request did not make her a subject again")

                // Her status URL says the same; the queue holds nothing for the workers any more.
                let statusURL = "/v1/collaborations/\(id)/proofs/\(alicesRequest.uuidString.lowercased())"
                let polled = try await api.call(.get, statusURL, as: "alice")
                #expect(Self.refusedErased(polled), "\(polled.raw)")
                #expect(await VerifierTests.worker(api.db, VerifierTests.engine(api.db)).sweep() == 0, "not retried: nothing pending")
                group.cancelAll()
            }
        }
    }

    /// A worker's group whose account is erased between its read and its commit: read again, that
    /// request refused account_erased without an event, the rest of the group decided in the same
    /// sweep.
    @Test("an account erased between a group's read and commit: re-read, refused account_erased, rest decided")
    func erasedDuringStoredDecision() async throws {
        // `ledger api`: the requests stored here wait for this test's worker alone.
        try await LiveServer.run(.api) { api in
            let (id, people) = try await ProofEngineTests.collaboration(api, people: 2)
            let requests = VerifierTests.requests(api.db)
            let alices = try await ProofEngineTests.submission(api, id, people[0], as: "alice")
            let bobs = try await ProofEngineTests.submission(api, id, people[1], as: "bob")
            try await requests.store(alices, limit: 20, window: .seconds(60))
            try await requests.store(bobs, limit: 20, window: .seconds(60))
            let office = Self.office(api.db)
            let (engine, reads) = ProofEngineTests.engine(api.db) {
                _ = try await office.erase(account: "alice", reason: "TICKET-37", requester: "officer")
            }

            #expect(await VerifierTests.worker(api.db, engine).sweep() == 2)
            #expect(reads.value == 2, "read again once: the erasure refused the first commit")
            #expect(try await VerifierTests.status(api.db, alices.requestId) == "refused")
            #expect(try await VerifierTests.verdictEvents(api.db, alices.requestId) == [])
            #expect(try await VerifierTests.status(api.db, bobs.requestId) == "granted")
            #expect(try await VerifierTests.verdictEvents(api.db, bobs.requestId) == ["AccessGranted"])
            let verdict = try await requests.status(requestId: alices.requestId, account: "alice")
            guard case .rejected(let reason, _, let position)? = verdict else {
                Issue.record("expected a refusal, got \(String(describing: verdict))")
                return
            }
            #expect(reason.rawValue == "account_erased" && position == nil)
            #expect(await VerifierTests.worker(api.db, VerifierTests.engine(api.db)).sweep() == 0, "not retried: nothing pending")
        }
    }

    /// ledger serve: an account erased between its proof's read and commit: read again, refused
    /// account_erased, nothing stored, its challenge unused and the account not made a subject
    /// again; the rest of the group decided.
    @Test("ledger serve: an account erased between read and commit: refused, nothing stored, rest decided")
    func erasedDuringFreshDecision() async throws {
        try await LiveServer.run { api in
            let (id, people) = try await ProofEngineTests.collaboration(api, people: 2)
            let alices = try await ProofEngineTests.submission(api, id, people[0], as: "alice")
            let bobs = try await ProofEngineTests.submission(api, id, people[1], as: "bob")
            let office = Self.office(api.db)
            let (engine, reads) = ProofEngineTests.engine(api.db) {
                _ = try await office.erase(account: "alice", reason: "TICKET-37", requester: "officer")
            }
            let results = await engine.decide(ProofEngineTests.fresh([alices, bobs]))

            #expect(ProofEngineTests.reason(results[0]) == "account_erased")
            #expect(ProofEngineTests.grantedTo(results[1]) == "bob")
            #expect(reads.value == 2, "read again once: the erasure refused the first commit")
            let db = api.db
            #expect(
                try await ProofEngineTests.count(db, "SELECT count(*) FROM ledger_proof_requests WHERE request_id = \(alices.requestId)")
                    == 0)
            #expect(
                try await ProofEngineTests.count(
                    db, "SELECT count(*) FROM ledger_challenges WHERE challenge_id = \(alices.challengeId) AND used_by_request IS NULL")
                    == 1, "her challenge unused")
            #expect(try await Self.subjects(api.db, "alice") == 0)
            #expect(
                try await ProofEngineTests.count(
                    db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')")
                    == 1, "bob's verdict only")
        }
    }
}
