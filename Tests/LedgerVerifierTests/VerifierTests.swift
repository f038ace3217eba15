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
import Synchronization
import Testing
import TransparencyLog

/// Stored proof requests (`ledger api`) decided by verifier workers through the engine, and
/// workers that die or hang mid-decision.
@Suite("Verifier workers")
struct VerifierTests {
    struct Killed: Error {}

    /// A started collaboration with alice's identity added, and a stored (undecided) proof request.
    /// (`ledger api` serves the tests that store requests: no worker of its own decides them.)
    static func storedRequest(_ api: LiveServer) async throws -> (collaboration: String, requestId: UUID, rootHash: RootHash) {
        let id = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
        let alice = SimulatedPerson(collaborationId: id, devices: 1)
        try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"added":["\#(alice.rootHash)"]}"#)
        let challenge = try await api.challenge(id, as: "alice")
        let bytes = Base64.decode(challenge["challenge"]!.string!)!
        let submission = ProofSubmission(
            collaborationId: id, account: "alice", challengeId: UUID(uuidString: challenge["challengeId"]!.string!)!,
            signature: alice.sign(bytes, device: 0), proof: alice.proof(device: 0))
        try await requests(api.db).store(submission, limit: 20, window: .seconds(60))
        return (id, submission.requestId, alice.rootHash)
    }

    static func requests(_ db: PostgresClient) -> ProofRequests { ProofRequests(client: db, logger: Logger(label: "test")) }

    static func engine(_ db: PostgresClient, deadline: Duration = .seconds(10), afterRead: (@Sendable () async throws -> Void)? = nil)
        -> ProofEngine
    {
        var settings = ProofEngine.Settings(maxGroup: 64)
        settings.deadline = deadline
        return ProofEngine(client: db, logger: Logger(label: "test"), settings: settings, hooks: .init(afterRead: afterRead))
    }

    static func worker(_ db: PostgresClient, _ engine: ProofEngine) -> VerifierWorker {
        VerifierWorker(
            engine: engine, requests: requests(db),
            wake: NotificationHub(client: db, channel: VerifierChannels.requests, logger: Logger(label: "test")),
            logger: Logger(label: "test"))
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

    static func unusedChallenges(_ db: PostgresClient) async throws -> Int64 {
        for try await n in try await db.query("SELECT count(*) FROM ledger_challenges WHERE used_by_request IS NULL").decode(Int64.self) {
            return n
        }
        return -1
    }

    @Test("a worker dying between its group's read and commit: nothing half-done; the next decides it once")
    func diesBeforeCommit() async throws {
        try await LiveServer.run(.api) { api in
            let (_, requestId, _) = try await Self.storedRequest(api)
            #expect(await Self.worker(api.db, Self.engine(api.db) { throw Killed() }).sweep() == 1)
            #expect(try await Self.status(api.db, requestId) == "pending")
            #expect(try await Self.verdictEvents(api.db, requestId) == [])
            #expect(try await Self.unusedChallenges(api.db) == 1, "the challenge is still unused")

            #expect(await Self.worker(api.db, Self.engine(api.db)).sweep() == 1)
            #expect(try await Self.status(api.db, requestId) == "granted")
            #expect(try await Self.verdictEvents(api.db, requestId) == ["AccessGranted"])
            #expect(await Self.worker(api.db, Self.engine(api.db)).sweep() == 0, "decided once: nothing pending any more")
        }
    }

    @Test("the worker decides on the collaboration at its commit: an identity removed since the request refused")
    func decidesOnCurrentState() async throws {
        try await LiveServer.run(.api) { api in
            let (id, requestId, rootHash) = try await Self.storedRequest(api)
            let store = EventStore(client: api.db, logger: Logger(label: "test"))
            let removed = Mutex(false)
            let engine = Self.engine(api.db) {
                guard !removed.withLock({ $0 }) else { return }
                removed.withLock { $0 = true }
                _ = try await CollaborationStreams(store: store).decideAndAppend(id) { _ in
                    .init(
                        events: [.identityRemoved(.init(rootHash: rootHash, account: nil))],
                        metadata: EventMetadata(actor: "devin"))
                }
            }
            #expect(await Self.worker(api.db, engine).sweep() == 1)
            #expect(try await Self.verdictEvents(api.db, requestId) == ["ProofRejected"])
            #expect(try await Self.status(api.db, requestId) == "rejected")
            let verdict = try await Self.requests(api.db).status(requestId: requestId, account: "alice")
            guard case .rejected(let reason, _, _) = verdict else {
                Issue.record("expected a rejection, got \(String(describing: verdict))")
                return
            }
            #expect(reason.rawValue == "identity_removed")
        }
    }

    @Test("two workers deciding one request at once: one commits, the other finds it decided; one verdict")
    func twoWorkersOneRequest() async throws {
        try await LiveServer.run(.api) { api in
            let (_, requestId, _) = try await Self.storedRequest(api)
            let db = api.db
            let other = Self.worker(db, Self.engine(db))
            // The second worker decides the request between the first one's read and commit.
            let once = Mutex(false)
            let first = Self.worker(
                db,
                Self.engine(db) {
                    guard
                        !once.withLock({
                            let done = $0
                            $0 = true
                            return done
                        })
                    else { return }
                    #expect(await other.sweep() == 1)
                })
            #expect(await first.sweep() == 1)
            #expect(try await Self.status(db, requestId) == "granted")
            #expect(try await Self.verdictEvents(db, requestId) == ["AccessGranted"])
        }
    }

    @Test("a worker hung between read and commit holds nothing: another decides meanwhile; let go, appends none")
    func hangsHoldingNothing() async throws {
        try await LiveServer.run(.api) { api in
            let (_, requestId, _) = try await Self.storedRequest(api)
            let db = api.db
            let (release, letGo) = AsyncStream<Void>.makeStream()
            let hanging = Mutex(false)
            let hung = Self.worker(
                db,
                Self.engine(db, deadline: .seconds(120)) {
                    guard
                        !hanging.withLock({
                            let was = $0
                            $0 = true
                            return was
                        })
                    else { return }
                    for await _ in release { break }
                })
            let stuck = Task { await hung.sweep() }
            try await waitUntil("the worker hangs after its read") { hanging.withLock { $0 } }

            #expect(await Self.worker(db, Self.engine(db)).sweep() == 1, "the request is not held")
            #expect(try await Self.status(db, requestId) == "granted")
            letGo.yield()
            #expect(await stuck.value == 1)
            #expect(try await Self.verdictEvents(db, requestId) == ["AccessGranted"])
        }
    }

    @Test("an API without an engine waits for a worker's verdict NOTIFY; with no worker, 202 and the status URL")
    func workerPath() async throws {
        // `ledger api`: no engine; long enough a verdict wait for a loaded machine's worker to answer
        // the second proof (the first, with no worker yet, pays it in full before its 202).
        try await LiveServer.run(.api, configuration: .testing { $0.verdictWait = .seconds(10) }) { api in
            try await withThrowingTaskGroup(of: Void.self) { group in
                try await api.waitListening(VerifierChannels.verdicts)
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
                let requests = NotificationHub(client: api.db, channel: VerifierChannels.requests, logger: Logger(label: "test"))
                group.addTask { try await requests.run() }
                group.addTask {
                    try await VerifierWorker(
                        engine: Self.engine(api.db), requests: Self.requests(api.db), wake: requests, logger: Logger(label: "test"),
                        pollInterval: .seconds(30)
                    ).run()
                }
                try await waitUntil("the stored request decided") {
                    try await api.call(.get, statusURL, as: "alice").body["status"]?.string == "granted"
                }
                try await waitUntil(timeout: .seconds(60), "requests LISTEN up") { requests.isListening }
                let second = try await api.verify(id, alice, as: "alice", device: 1)
                #expect(second.status == .ok, "\(second.raw)")
                #expect(second.body["status"]?.string == "granted")
                group.cancelAll()
            }
        }
    }
}
