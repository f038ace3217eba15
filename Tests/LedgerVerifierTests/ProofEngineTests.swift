import Foundation
import HTTPTypes
import LedgerApp
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

/// Proofs decided by the engine in groups: read, decide, commit (`ProofEngine`, as in `ledger serve`
/// and the verifier workers).
@Suite("Proof engine")
struct ProofEngineTests {
    struct Killed: Error {}

    /// A collaboration owned by devin with the given people's identities added.
    static func collaboration(_ api: LiveServer, people count: Int) async throws -> (id: String, people: [SimulatedPerson]) {
        let id = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
        let people = (0..<count).map { _ in SimulatedPerson(collaborationId: id, devices: 2) }
        let added = people.map { "\"\($0.rootHash)\"" }.joined(separator: ",")
        let r = try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"added":[\#(added)]}"#)
        #expect(r.status == .ok, "\(r.raw)")
        return (id, people)
    }

    /// A challenge issued to `account`, signed with `signer`'s device 0 (or over other bytes).
    static func submission(
        _ api: LiveServer, _ id: String, _ signer: SimulatedPerson, as account: String, overOtherBytes: Bool = false
    ) async throws -> ProofSubmission {
        let challenge = try await api.challenge(id, as: account)
        let bytes = Base64.decode(challenge["challenge"]!.string!)!
        return ProofSubmission(
            collaborationId: id, account: account, challengeId: UUID(uuidString: challenge["challengeId"]!.string!)!,
            signature: signer.sign(overOtherBytes ? bytes.reversed() : bytes, device: 0), proof: signer.proof(device: 0))
    }

    static func count(_ db: PostgresClient, _ query: PostgresQuery) async throws -> Int64 {
        for try await n in try await db.query(query).decode(Int64.self) { return n }
        return -1
    }

    static func reason(_ result: Result<Verdict?, any Error>) -> String? {
        guard case .success(.rejected(let reason, _, _)?) = result else { return nil }
        return reason.rawValue
    }

    static func grantedTo(_ result: Result<Verdict?, any Error>) -> String? {
        guard case .success(.granted(_, let account, _)?) = result else { return nil }
        return account
    }

    static let settings = ProofEngine.Settings(maxGroup: 64)

    static func fresh(_ submissions: [ProofSubmission]) -> [ProofEngine.Request] {
        submissions.map { ProofEngine.Request($0, stored: false) }
    }

    /// One group: each verdict on the state the ones before it left, one shared challenge used
    /// once, unknown collaborations 404 with nothing stored, all verdicts in one commit.
    @Test("one group: each verdict on the state before it, a shared challenge used once, one commit")
    func oneGroup() async throws {
        try await LiveServer.run { api in
            let (id, people) = try await Self.collaboration(api, people: 3)
            let (other, others) = try await Self.collaboration(api, people: 1)
            let (alice, bob, carol) = (people[0], people[1], people[2])
            let shared = try await Self.submission(api, id, bob, as: "bob")
            var again = shared
            again.requestId = UUID()
            let unknown = ProofSubmission(
                collaborationId: UUID().uuidString.lowercased(), account: "erin", challengeId: UUID(), signature: [1],
                proof: alice.proof(device: 0))
            let submissions = [
                try await Self.submission(api, id, alice, as: "alice"),
                // Alice's device key in mallory's hands: the identity is alice's by the time this is decided.
                try await Self.submission(api, id, alice, as: "mallory"),
                shared,
                again,  // the same challenge again, in the same group
                unknown,
                try await Self.submission(api, id, carol, as: "carol", overOtherBytes: true),
                try await Self.submission(api, other, others[0], as: "dana"),
            ]
            let engine = ProofEngine(client: api.db, logger: Logger(label: "test"), settings: Self.settings)
            let results = await engine.decide(Self.fresh(submissions))

            #expect(Self.grantedTo(results[0]) == "alice")
            #expect(Self.reason(results[1]) == "identity_claimed_by_another_account")
            #expect(Self.grantedTo(results[2]) == "bob")
            #expect(Self.reason(results[3]) == "challenge_used")
            guard case .failure(let error as DomainError) = results[4] else {
                Issue.record("expected a 404, got \(results[4])")
                return
            }
            #expect(error.code == .notFound)
            #expect(Self.reason(results[5]) == "bad_signature")
            #expect(Self.grantedTo(results[6]) == "dana")

            // Six requests stored and recorded (not the one to an unknown collaboration).
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 6)
            #expect(
                try await Self.count(
                    api.db,
                    "SELECT count(*) FROM ledger_proof_requests WHERE status <> 'pending' AND decided_position IS NOT NULL"
                ) == 6)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests WHERE account = 'erin'") == 0)
            // Each verdict once in the log, the request row saying the same; both collaborations in one commit.
            #expect(
                try await Self.count(
                    api.db,
                    """
                    SELECT count(*) FROM ledger_proof_requests r JOIN ledger_events e ON e.metadata->>'causationId' = r.request_id::text
                    WHERE e.position = r.decided_position
                      AND e.event_type = CASE r.status WHEN 'granted' THEN 'AccessGranted' ELSE 'ProofRejected' END
                    """) == 6)
            #expect(
                try await Self.count(
                    api.db, "SELECT count(DISTINCT recorded_at) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')")
                    == 1)
            // Each verdict answered at its event's position in the log.
            var logged: [Int64] = []
            for try await position in try await api.db.query(
                "SELECT position FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected') ORDER BY position"
            ).decode(Int64.self) { logged.append(position) }
            let answered = results.compactMap { result -> Int64? in
                switch result {
                case .success(.granted(_, _, let position)?): position
                case .success(.rejected(_, _, let position)?): position
                default: nil
                }
            }
            #expect(answered.sorted() == logged)
            // Challenges: each used by exactly one request.
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_challenges WHERE used_by_request IS NOT NULL") == 5)
            // Stored in the commit that decided them: one transaction, one timestamp.
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests WHERE created_at = decided_at") == 6)
        }
    }

    /// An engine that runs `meanwhile` between reading a group's premises and its commit, on the
    /// first `times` attempts (every attempt when nil); the counter counts the reads.
    static func engine(
        _ db: PostgresClient, times: Int? = 1, meanwhile: @escaping @Sendable () async throws -> Void
    ) -> (ProofEngine, Counter) {
        let counter = Counter()
        var settings = Self.settings
        settings.deadline = .seconds(60)  // ample, so a loaded machine still runs every attempt
        return (
            ProofEngine(
                client: db, logger: Logger(label: "test"), settings: settings,
                hooks: .init(afterRead: {
                    let n = counter.next()
                    if times == nil || n <= times! { try await meanwhile() }
                })),
            counter
        )
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        func next() -> Int {
            count.withLock {
                $0 += 1
                return $0
            }
        }
        var value: Int { count.withLock { $0 } }
    }

    static func decidedInOneCommit(_ db: PostgresClient) async throws -> Int64 {
        try await count(db, "SELECT count(*) FROM ledger_proof_requests WHERE created_at = decided_at")
    }

    @Test("an identity removed after the group read the collaboration: read again, refused, stored once")
    func collaborationChangedMeanwhile() async throws {
        try await LiveServer.run { api in
            let (id, people) = try await Self.collaboration(api, people: 1)
            let alice = people[0]
            let store = EventStore(client: api.db, logger: Logger(label: "test"))
            let (engine, _) = Self.engine(api.db) {
                _ = try await CollaborationStreams(store: store).decideAndAppend(id) { _ in
                    .init(
                        events: [.identityRemoved(.init(rootHash: alice.rootHash, account: nil))], metadata: EventMetadata(actor: "devin"))
                }
            }
            let results = await engine.decide(Self.fresh([try await Self.submission(api, id, alice, as: "alice")]))

            #expect(Self.reason(results[0]) == "identity_removed")
            // Decided once, on the second attempt: one request, stored with its verdict, after the removal.
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 1)
            #expect(try await Self.decidedInOneCommit(api.db) == 1)
            #expect(
                try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')")
                    == 1)
            #expect(
                try await Self.count(
                    api.db,
                    """
                    SELECT count(*) FROM ledger_events v JOIN ledger_events r ON r.event_type = 'IdentityRemoved'
                    WHERE v.event_type = 'ProofRejected' AND v.position > r.position
                    """) == 1)
        }
    }

    /// A challenge's change, and the refusal it brings: used by another request, or expired.
    static let challengeChanges = [
        ("challenge_used", "used_by_request = gen_random_uuid()"),
        ("challenge_expired", "expires_at = now() - interval '1 second'"),
    ]

    static func changeChallenge(_ db: PostgresClient, _ challengeId: UUID, _ change: String) async throws {
        var binds = PostgresBindings()
        binds.append(challengeId)
        try await db.query(PostgresQuery(unsafeSQL: "UPDATE ledger_challenges SET \(change) WHERE challenge_id = $1", binds: binds))
    }

    @Test(
        "a challenge used by another request, or expired, after the group read it: re-read, refused, kept",
        arguments: challengeChanges)
    func challengeChangedMeanwhile(reason: String, change: String) async throws {
        try await LiveServer.run { api in
            let (id, people) = try await Self.collaboration(api, people: 1)
            let submission = try await Self.submission(api, id, people[0], as: "alice")
            let db = api.db
            let (engine, _) = Self.engine(db) {
                try await Self.changeChallenge(db, submission.challengeId, change)
            }
            let results = await engine.decide(Self.fresh([submission]))

            #expect(Self.reason(results[0]) == reason)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 1)
            #expect(try await Self.decidedInOneCommit(api.db) == 1)
            #expect(
                try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')")
                    == 1)
            // The request did not take the challenge.
            #expect(
                try await Self.count(
                    api.db, "SELECT count(*) FROM ledger_challenges c JOIN ledger_proof_requests r ON r.request_id = c.used_by_request")
                    == 0)
        }
    }

    /// A group refused on every attempt (its collaboration moves on before each commit): over HTTP
    /// 409 concurrent_update after the engine's attempts, nothing written, the challenge unused.
    @Test("a group refused on every attempt: 409 concurrent_update over HTTP, nothing written, challenge unused")
    func refusedEveryTime() async throws {
        let reads = Counter()
        // Eight attempts, each appending to every stream: room for a loaded machine.
        var settings = Self.settings
        settings.deadline = .seconds(60)
        let patient = settings
        // The server's database, once it runs: the hook appends through it.
        let database = Mutex<PostgresClient?>(nil)
        // Before each commit, a notice lands on every collaboration: each attempt is refused.
        let hooks = ProofEngine.Hooks(afterRead: {
            _ = reads.next()
            let client = try #require(database.withLock { $0 })
            let store = EventStore(client: client, logger: Logger(label: "test"))
            var streams: [String] = []
            for try await id in try await client.query("SELECT stream_id FROM ledger_streams").decode(String.self) {
                streams.append(id)
            }
            let notice = CollaborationEvent.highlightPosted(
                .init(kind: .persistence, trigger: nil, mentionedRootHash: nil, account: "devin"))
            for id in streams {
                _ = try await store.append(
                    .init(streamId: id, expectedVersion: .any, events: [notice.newEvent(metadata: .init(actor: "devin"))]))
            }
        })
        try await LiveServer.run(
            configuration: .testing { $0.verdictWait = .seconds(60) }, engine: .init(settings: patient, hooks: hooks)
        ) { api in
            database.withLock { $0 = api.db }
            let (id, people) = try await Self.collaboration(api, people: 1)
            let r = try await api.verify(id, people[0], as: "alice")
            #expect(r.status == .conflict, "\(r.raw)")
            #expect(r.body.errorCode == "concurrent_update")
            #expect(reads.value == Self.settings.attempts)
            #expect(
                try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')")
                    == 0)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_challenges WHERE used_by_request IS NOT NULL") == 0)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 0)
        }
    }

    /// A process that dies after reading a group, before its commit: nothing stored, no verdict,
    /// the challenges unused; the same proofs are decided afterwards.
    @Test("a process dying between a group's read and commit: nothing stored; the proofs are decided later")
    func diesBeforeCommit() async throws {
        try await LiveServer.run { api in
            let (id, people) = try await Self.collaboration(api, people: 2)
            let submissions = [
                try await Self.submission(api, id, people[0], as: "alice"), try await Self.submission(api, id, people[1], as: "bob"),
            ]
            let dying = ProofEngine(
                client: api.db, logger: Logger(label: "test"), settings: Self.settings, hooks: .init(afterRead: { throw Killed() }))
            let outcomes = await dying.decide(Self.fresh(submissions))
            for outcome in outcomes {
                guard case .failure(let error) = outcome else {
                    Issue.record("expected a failure, got \(outcome)")
                    continue
                }
                #expect(error is Killed)
            }
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 0)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_challenges WHERE used_by_request IS NOT NULL") == 0)
            #expect(
                try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')")
                    == 0)

            let results = await ProofEngine(client: api.db, logger: Logger(label: "test"), settings: Self.settings).decide(
                Self.fresh(submissions))
            #expect(results.map(Self.grantedTo) == ["alice", "bob"])
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests WHERE status = 'granted'") == 2)
        }
    }
}
