import Foundation
import HTTPTypes
import LedgerAPI
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerWire
import LedgerStore
import LedgerTestSupport
import LedgerVerifier
import Logging
import PostgresNIO
import Synchronization
import Testing

/// Proof requests decided by verifier workers, and workers that die mid-request.
@Suite("Verifier workers")
struct VerifierTests {
    struct Killed: Error {}

    /// A started collaboration with alice's identity added, and a stored (undecided) proof request.
    static func storedRequest(_ api: API) async throws -> (collaboration: String, requestId: UUID) {
        let id = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
        let alice = SimulatedPerson(collaborationId: id, devices: 1)
        try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"added":["\#(alice.rootHash)"]}"#)
        let challenge = try await api.challenge(id, as: "alice")
        let bytes = Base64.decode(challenge["challenge"]!.string!)!
        let requests = ProofRequests(client: api.db, logger: Logger(label: "test"))
        let submission = ProofSubmission(
            collaborationId: id, account: "alice", challengeId: UUID(uuidString: challenge["challengeId"]!.string!)!,
            signature: alice.sign(bytes, device: 0), proof: alice.proof(device: 0))
        try await requests.store([submission])
        let requestId = submission.requestId
        return (id, requestId)
    }

    static func verdictEvents(_ db: PostgresClient, _ requestId: UUID) async throws -> [String] {
        let rows = try await db.query(
            "SELECT event_type FROM ledger_events WHERE metadata->>'causationId' = \(requestId.uuidString.lowercased()) ORDER BY position")
        var types: [String] = []
        for try await type in rows.decode(String.self) { types.append(type) }
        return types
    }

    static func status(_ db: PostgresClient, _ requestId: UUID) async throws -> String {
        let rows = try await db.query("SELECT status FROM ledger_proof_requests WHERE request_id = \(requestId)")
        for try await status in rows.decode(String.self) { return status }
        return "missing"
    }

    @Test("a verifier killed after appending its verdict, before recording it: the next one records that verdict, not a second")
    func killedAfterAppend() async throws {
        try await withAPI { api in
            let (_, requestId) = try await Self.storedRequest(api)
            let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
            let dying = ProofDecider(
                client: api.db, store: store, logger: Logger(label: "test"), hooks: .init(afterAppend: { _ in throw Killed() }))
            await #expect(throws: Killed.self) { try await dying.decide(requestId) }
            #expect(try await Self.status(api.db, requestId) == "pending")
            #expect(try await Self.verdictEvents(api.db, requestId) == ["AccessGranted"])

            let worker = VerifierWorker(
                decider: ProofDecider(client: api.db, store: store, logger: Logger(label: "test")),
                requests: NotificationHub(client: api.db, channel: VerifierChannels.requests, logger: Logger(label: "test")),
                logger: Logger(label: "test"))
            #expect(await worker.sweep() == 1)
            #expect(try await Self.status(api.db, requestId) == "granted")
            #expect(try await Self.verdictEvents(api.db, requestId) == ["AccessGranted"])
        }
    }

    @Test("the worker path decides on the collaboration as it is when the verdict is appended: an identity removed after the request was stored is refused")
    func decidesOnCurrentState() async throws {
        try await withAPI { api in
            let (id, requestId) = try await Self.storedRequest(api)
            let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
            let members = try await api.call(.get, "/v1/collaborations/\(id)/members?minPosition=2", as: "devin")
            let rootHash = try #require(members.body["members"]?.array.first?["rootHash"]?.string)
            let decider = ProofDecider(
                client: api.db, store: store, logger: Logger(label: "test"),
                hooks: .init(afterLock: { _, _ in
                    _ = try await Collaborations(store: store).decideAndAppend(id) { _ in
                        .init(
                            events: [.identityRemoved(.init(rootHash: try RootHash(base64: rootHash), account: nil))],
                            metadata: EventMetadata(actor: "devin"))
                    }
                }))
            let verdict = try await decider.decide(requestId)
            guard case .rejected(let reason, _, _) = verdict else { Issue.record("expected a rejection, got \(String(describing: verdict))"); return }
            #expect(reason == "identity_removed")
            #expect(try await Self.verdictEvents(api.db, requestId) == ["ProofRejected"])
            #expect(try await Self.status(api.db, requestId) == "rejected")
        }
    }

    @Test("a verifier that dies holding a request: others skip it meanwhile, nothing is half-done, another decides it once")
    func diesHoldingRequest() async throws {
        try await withAPI { api in
            let (_, requestId) = try await Self.storedRequest(api)
            let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
            let db = api.db
            let survivor = ProofDecider(client: db, store: store, logger: Logger(label: "test"))
            // The dying decider holds the row (and has read the challenge) when it goes away;
            // its transaction is abandoned. While it holds the row, another decider skips it.
            let dying = ProofDecider(
                client: db, store: store, logger: Logger(label: "test"),
                hooks: .init(afterLock: { id, _ in
                    #expect(try await survivor.decide(id) == nil, "a held request is skipped, not waited for")
                    throw Killed()
                }))
            await #expect(throws: Killed.self) { try await dying.decide(requestId) }
            #expect(try await Self.status(db, requestId) == "pending")
            #expect(try await Self.verdictEvents(db, requestId) == [])
            let unused = try await db.query("SELECT count(*) FROM ledger_challenges WHERE used_by_request IS NULL")
            for try await n in unused.decode(Int64.self) { #expect(n == 1, "the challenge was given back") }

            let verdict = try await survivor.decide(requestId)
            guard case .granted(_, let account, _) = verdict else { Issue.record("expected a grant, got \(String(describing: verdict))"); return }
            #expect(account == "alice")
            #expect(try await survivor.decide(requestId) == nil, "decided once: a second decision finds nothing pending")
            #expect(try await Self.verdictEvents(db, requestId) == ["AccessGranted"])
        }
    }

    @Test("a verifier whose client hangs holding a request: the server ends its session, and another decides it once")
    func hangsHoldingRequest() async throws {
        try await withAPI { api in
            let (_, requestId) = try await Self.storedRequest(api)
            let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
            let db = api.db
            let survivor = ProofDecider(client: db, store: store, logger: Logger(label: "test"))
            // The hung decider locks the row, then its client goes silent (as a PostgresNIO
            // query that never returns does) until the test lets it go on. The skip is checked
            // in the hook, at once after the lock: the idle limit runs from the lock statement,
            // and a check made later could meet a session the server had already ended.
            let locked = Mutex(false)
            let (release, letGo) = AsyncStream<Void>.makeStream()
            let hung = ProofDecider(
                client: db, store: store, logger: Logger(label: "test"), idleLimit: .seconds(3),
                hooks: .init(afterLock: { id, _ async throws in
                    #expect(try await survivor.decide(id) == nil, "a held request is skipped")
                    locked.withLock { $0 = true }
                    for await _ in release { break }
                }))
            let stuck = Task { try await hung.decide(requestId) }
            try await waitUntil("the hung decider holds the request") { locked.withLock { $0 } }

            // The server ends the silent session after 3 s: its lock goes, the survivor decides.
            let verdict = Mutex<Verdict?>(nil)
            try await waitUntil("the held request decided by another") {
                guard let decided = try await survivor.decide(requestId) else { return false }
                verdict.withLock { $0 = decided }
                return true
            }
            guard case .granted(_, let account, _) = verdict.withLock({ $0 }) else {
                Issue.record("expected a grant, got \(String(describing: verdict.withLock { $0 }))")
                return
            }
            #expect(account == "alice")
            letGo.yield()
            await #expect(throws: ConnectionClosed.self, "the hung decision's session is gone") { try await stuck.value }
            #expect(try await Self.status(db, requestId) == "granted")
            #expect(try await Self.verdictEvents(db, requestId) == ["AccessGranted"])
        }
    }

    @Test("an API without a batcher waits on the verdict NOTIFY from a worker; without a worker it answers 202, then the status URL")
    func workerPath() async throws {
        let hubs = HubBox()
        try await withAPI(
            // Long enough for a loaded machine's worker to answer the second proof; the first
            // (no worker yet) pays it in full before its 202.
            configuration: .init(verdictWait: .seconds(3)),
            verifier: { client, _ in
                let hub = NotificationHub(client: client, channel: VerifierChannels.verdicts, logger: Logger(label: "test"))
                hubs.set(hub)
                return VerifierLink(batcher: nil, verdicts: hub)
            }
        ) { api in
            let verdicts = hubs.get()!
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await verdicts.run() }
                try await waitUntil("verdict LISTEN up") { verdicts.isListening }
                let id = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
                let alice = SimulatedPerson(collaborationId: id, devices: 2)
                try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"added":["\#(alice.rootHash)"]}"#)

                // No worker yet: the call answers 202 with a status URL, and the request is stored.
                let pending = try await api.verify(id, alice, as: "alice", device: 0)
                #expect(pending.status == .accepted, "\(pending.raw)")
                #expect(pending.body["status"]?.string == "pending")
                let statusURL = pending.body["statusUrl"]!.string!
                #expect(try await api.call(.get, statusURL, as: "alice").body["status"]?.string == "pending")
                #expect(try await api.call(.get, statusURL, as: "bob").status == .notFound, "another account cannot read it")

                // A worker starts: it sweeps the stored request, and answers new ones while the call waits.
                let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
                let requests = NotificationHub(client: api.db, channel: VerifierChannels.requests, logger: Logger(label: "test"))
                group.addTask { try await requests.run() }
                group.addTask {
                    try await VerifierWorker(
                        decider: ProofDecider(client: api.db, store: store, logger: Logger(label: "test")), requests: requests,
                        logger: Logger(label: "test"), pollInterval: .seconds(30)
                    ).run()
                }
                try await waitUntil("the stored request decided") {
                    try await api.call(.get, statusURL, as: "alice").body["status"]?.string == "granted"
                }
                try await waitUntil("requests LISTEN up") { requests.isListening }
                let second = try await api.verify(id, alice, as: "alice", device: 1)
                #expect(second.status == .ok, "\(second.raw)")
                #expect(second.body["status"]?.string == "granted")
                group.cancelAll()
            }
        }
    }
}

/// Hands the hub built inside the router factory to the test body.
final class HubBox: Sendable {
    private let hub = Mutex<NotificationHub?>(nil)
    func set(_ value: NotificationHub) { hub.withLock { $0 = value } }
    func get() -> NotificationHub? { hub.withLock { $0 } }
}
