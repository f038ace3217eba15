import Foundation
import HTTPTypes
import LedgerAPI
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerWire
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import LedgerVerifier

/// Proofs decided in groups by the process that received them (`ProofBatcher`, as in `ledger serve`).
@Suite("Proof groups")
struct ProofBatcherTests {
    struct Killed: Error {}

    /// A collaboration owned by devin with the given people's identities added.
    static func collaboration(_ api: API, people count: Int) async throws -> (id: String, people: [SimulatedPerson]) {
        let id = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
        let people = (0..<count).map { _ in SimulatedPerson(collaborationId: id, devices: 2) }
        let added = people.map { "\"\($0.rootHash)\"" }.joined(separator: ",")
        let r = try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"added":[\#(added)]}"#)
        #expect(r.status == .ok, "\(r.raw)")
        return (id, people)
    }

    /// A challenge issued to `account`, signed with `signer`'s device 0 (or over other bytes).
    static func submission(
        _ api: API, _ id: String, _ signer: SimulatedPerson, as account: String, overOtherBytes: Bool = false
    ) async throws -> ProofBatcher.Submission {
        let challenge = try await api.challenge(id, as: account)
        let bytes = Base64.decode(challenge["challenge"]!.string!)!
        return ProofBatcher.Submission(
            collaborationId: id, account: account, challengeId: UUID(uuidString: challenge["challengeId"]!.string!)!,
            signature: signer.sign(overOtherBytes ? bytes.reversed() : bytes, device: 0), proof: signer.proof(device: 0))
    }

    static func count(_ db: PostgresClient, _ query: PostgresQuery) async throws -> Int64 {
        for try await n in try await db.query(query).decode(Int64.self) { return n }
        return -1
    }

    static func reason(_ result: Result<ProofBatcher.Outcome, any Error>) -> String? {
        guard case .success(.decided(.rejected(let reason, _, _))) = result else { return nil }
        return reason
    }

    static func grantedTo(_ result: Result<ProofBatcher.Outcome, any Error>) -> String? {
        guard case .success(.decided(.granted(_, let account, _))) = result else { return nil }
        return account
    }

    @Test(
        "one group: each verdict on the state the ones before it left, one shared challenge used once, unknown collaborations 404 with nothing stored, all verdicts in one commit"
    )
    func oneGroup() async throws {
        try await withAPI { api in
            let (id, people) = try await Self.collaboration(api, people: 3)
            let (other, others) = try await Self.collaboration(api, people: 1)
            let (alice, bob, carol) = (people[0], people[1], people[2])
            let shared = try await Self.submission(api, id, bob, as: "bob")
            let unknown = ProofBatcher.Submission(
                collaborationId: UUID().uuidString.lowercased(), account: "erin", challengeId: UUID(), signature: [1],
                proof: alice.proof(device: 0))
            let submissions = [
                try await Self.submission(api, id, alice, as: "alice"),
                // Alice's device key in mallory's hands: the identity is alice's by the time this is decided.
                try await Self.submission(api, id, alice, as: "mallory"),
                shared,
                shared,  // the same challenge again, in the same group
                unknown,
                try await Self.submission(api, id, carol, as: "carol", overOtherBytes: true),
                try await Self.submission(api, other, others[0], as: "dana"),
            ]
            let batcher = ProofBatcher(
                client: api.db, store: PostgresEventStore(client: api.db, logger: Logger(label: "test")), logger: Logger(label: "test"))
            let results = await batcher.decide(submissions)

            #expect(Self.grantedTo(results[0]) == "alice")
            #expect(Self.reason(results[1]) == "identity_claimed_by_another_account")
            #expect(Self.grantedTo(results[2]) == "bob")
            #expect(Self.reason(results[3]) == "challenge_used")
            guard case .failure(let error as DomainError) = results[4] else {
                Issue.record("expected a 404, got \(results[4])")
                return
            }
            #expect(error.code == "not_found")
            #expect(Self.reason(results[5]) == "bad_signature")
            #expect(Self.grantedTo(results[6]) == "dana")

            // Six requests stored and recorded (not the one to an unknown collaboration), none left claimed.
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 6)
            #expect(
                try await Self.count(
                    api.db,
                    "SELECT count(*) FROM ledger_proof_requests WHERE status <> 'pending' AND claimed_until IS NULL AND decided_position IS NOT NULL"
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
                case .success(.decided(.granted(_, _, let position))): position
                case .success(.decided(.rejected(_, _, let position))): position
                default: nil
                }
            }
            #expect(answered.sorted() == logged)
            // Challenges: each used by exactly one request.
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_challenges WHERE used_by_request IS NOT NULL") == 5)
            // Stored in the commit that decided them (the one-commit path): one transaction, one timestamp.
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests WHERE created_at = decided_at") == 6)
        }
    }

    /// A batcher whose one-commit path runs `meanwhile` between reading its premises and its
    /// commit, on the first `times` attempts (every attempt when nil); `reads` counts them.
    static func batcher(
        _ api: API, times: Int? = 1, meanwhile: @escaping @Sendable () async throws -> Void
    ) -> (ProofBatcher, Counter) {
        let counter = Counter()
        return (
            ProofBatcher(
                client: api.db, store: PostgresEventStore(client: api.db, logger: Logger(label: "test")), logger: Logger(label: "test"),
                claim: .seconds(60),  // the groups' deadline: ample, so a loaded machine still runs every attempt
                hooks: .init(afterRead: {
                    let n = counter.next()
                    if times == nil || n <= times! { try await meanwhile() }
                })),
            counter
        )
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        func next() -> Int { count.withLock { $0 += 1; return $0 } }
        var value: Int { count.withLock { $0 } }
    }

    static func decidedInOneCommit(_ db: PostgresClient) async throws -> Int64 {
        try await count(db, "SELECT count(*) FROM ledger_proof_requests WHERE created_at = decided_at")
    }

    @Test("one commit: an identity removed after the group read the collaboration: read again, refused, stored once with its verdict")
    func collaborationChangedMeanwhile() async throws {
        try await withAPI { api in
            let (id, people) = try await Self.collaboration(api, people: 1)
            let alice = people[0]
            let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
            let (batcher, _) = Self.batcher(api) {
                _ = try await Collaborations(store: store).decideAndAppend(id) { _ in
                    .init(events: [.identityRemoved(.init(rootHash: alice.rootHash, account: nil))], metadata: EventMetadata(actor: "devin"))
                }
            }
            let results = await batcher.decide([try await Self.submission(api, id, alice, as: "alice")])

            #expect(Self.reason(results[0]) == "identity_removed")
            // Decided once, on the second attempt: one request, stored with its verdict, after the removal.
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 1)
            #expect(try await Self.decidedInOneCommit(api.db) == 1)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')") == 1)
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
        "one commit: a challenge used by another request, or expired, after the group read it: read again, refused, not consumed",
        arguments: challengeChanges)
    func challengeChangedMeanwhile(reason: String, change: String) async throws {
        try await withAPI { api in
            let (id, people) = try await Self.collaboration(api, people: 1)
            let submission = try await Self.submission(api, id, people[0], as: "alice")
            let db = api.db
            let (batcher, _) = Self.batcher(api) {
                try await Self.changeChallenge(db, submission.challengeId, change)
            }
            let results = await batcher.decide([submission])

            #expect(Self.reason(results[0]) == reason)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 1)
            #expect(try await Self.decidedInOneCommit(api.db) == 1)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')") == 1)
            // The request did not take the challenge.
            #expect(
                try await Self.count(
                    api.db, "SELECT count(*) FROM ledger_challenges c JOIN ledger_proof_requests r ON r.request_id = c.used_by_request") == 0)
        }
    }

    /// A submission whose challenge `batcher` is told it issued (as `ledger serve`'s API tells it).
    static func issuedSubmission(
        _ api: API, _ batcher: ProofBatcher, _ id: String, _ signer: SimulatedPerson, as account: String
    ) async throws -> ProofBatcher.Submission {
        let challenge = try await api.challenge(id, as: account)
        let bytes = Base64.decode(challenge["challenge"]!.string!)!
        let challengeId = UUID(uuidString: challenge["challengeId"]!.string!)!
        batcher.issued(
            ProofRequests.Challenge(challengeId: challengeId, challenge: bytes, expiresAt: Date().addingTimeInterval(100)),
            collaborationId: id, account: account)
        return ProofBatcher.Submission(
            collaborationId: id, account: account, challengeId: challengeId, signature: signer.sign(bytes, device: 0),
            proof: signer.proof(device: 0))
    }

    static func plainBatcher(_ api: API) -> ProofBatcher {
        ProofBatcher(
            client: api.db, store: PostgresEventStore(client: api.db, logger: Logger(label: "test")), logger: Logger(label: "test"),
            claim: .seconds(60))
    }

    @Test(
        "known premises: a group on challenges this process issued and a collaboration it decided on commits without reading; the collaboration changed since (an identity removed), the commit refuses, the group reads and is refused"
    )
    func knownPremises() async throws {
        try await withAPI { api in
            let (id, people) = try await Self.collaboration(api, people: 2)
            let (alice, bob) = (people[0], people[1])
            let batcher = Self.plainBatcher(api)
            // The collaboration is not known yet: read.
            #expect(Self.grantedTo(await batcher.decide([try await Self.issuedSubmission(api, batcher, id, alice, as: "alice")])[0]) == "alice")
            #expect(batcher.known.hits.load(ordering: .relaxed) == 0)
            // Known now, as the last group left it.
            #expect(Self.grantedTo(await batcher.decide([try await Self.issuedSubmission(api, batcher, id, alice, as: "alice")])[0]) == "alice")
            #expect(batcher.known.hits.load(ordering: .relaxed) == 1)
            // A command removes bob's identity; the batcher's knowledge is stale.
            let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
            _ = try await Collaborations(store: store).decideAndAppend(id) { _ in
                .init(events: [.identityRemoved(.init(rootHash: bob.rootHash, account: nil))], metadata: EventMetadata(actor: "devin"))
            }
            let results = await batcher.decide([try await Self.issuedSubmission(api, batcher, id, bob, as: "bob")])

            #expect(Self.reason(results[0]) == "identity_removed")
            #expect(batcher.known.hits.load(ordering: .relaxed) == 2)
            #expect(batcher.known.refusals.load(ordering: .relaxed) == 1)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 3)
            #expect(try await Self.decidedInOneCommit(api.db) == 3)
            #expect(
                try await Self.count(
                    api.db,
                    """
                    SELECT count(*) FROM ledger_events v JOIN ledger_events r ON r.event_type = 'IdentityRemoved'
                    WHERE v.event_type = 'ProofRejected' AND v.position > r.position
                    """) == 1)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'AccessGranted'") == 2)
        }
    }

    @Test("known premises: a report older than what is known (a read that began before a command's commit) does not replace it")
    func knownKeepsTheLatest() throws {
        let command = StartCollaboration(localIdentifier: "l", title: "t", initiatorHandle: "h")
        guard case .started(let started) = command.started(collaborationId: "c", owner: "devin", universalLink: "u") else {
            Issue.record("not a start")
            return
        }
        let known = KnownPremises()
        let challengeId = UUID()
        known.issued(challengeId, .init(bytes: [1], collaborationId: "c", account: "alice", expiresAt: Date().addingTimeInterval(100)))
        let group = [
            ProofBatcher.Stored(
                index: 0, requestId: UUID(),
                submission: .init(
                    collaborationId: "c", account: "alice", challengeId: challengeId, signature: [],
                    proof: IdentityProof(publicKey: [], publicKeyIndex: 0, inclusionHashes: [])))
        ]
        func version() -> Int64? { known.premises(for: group)?.currents["c"]?.version }
        let state = CollaborationState(started: started)
        known.learn(["c": .init(state: state, version: 3, position: 30)])
        known.learn(["c": .init(state: state, version: 2, position: 20)])
        #expect(version() == 3)
        known.learn(["c": .init(state: state, version: 4, position: 40)])
        #expect(version() == 4)
        known.forget(group)
        #expect(version() == nil)
    }

    /// The batcher a `LinkFactory` made, for the test body.
    final class Made: Sendable {
        let batcher = Mutex<ProofBatcher?>(nil)
    }

    @Test(
        "known premises: commands through the API tell the batcher how they left a collaboration; the groups after them decide on it without reading, and no commit is refused"
    )
    func commandsTellKnownPremises() async throws {
        let made = Made()
        let link: LinkFactory = { client, store in
            let batcher = ProofBatcher(client: client, store: store, logger: Logger(label: "test"), claim: .seconds(60))
            made.batcher.withLock { $0 = batcher }
            return VerifierLink(
                batcher: batcher, localDecider: ProofDecider(client: client, store: store, logger: Logger(label: "test")), verdicts: nil)
        }
        try await withAPI(verifier: link) { api in
            let batcher = try #require(made.batcher.withLock { $0 })
            // Started and given identities by commands: the first group already knows it.
            let (id, people) = try await Self.collaboration(api, people: 2)
            let (alice, bob) = (people[0], people[1])
            #expect(try await api.verify(id, alice, as: "alice").status == .ok)
            #expect(batcher.known.hits.load(ordering: .relaxed) == 1)
            // A command removes bob's identity: the next group decides on that, without a refusal.
            let removed = try await api.call(
                .post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"removed":["\#(bob.rootHash)"]}"#)
            #expect(removed.status == .ok)
            let refused = try await api.verify(id, bob, as: "bob")
            #expect(refused.status == .forbidden, "\(refused.raw)")
            #expect(refused.body["error"]?["reason"]?.string == "identity_removed")
            // A highlight moves the collaboration's version too.
            let highlight = try await api.call(
                .post, "/v1/collaborations/\(id)/highlights", as: "devin", json: #"{"kind":"persistence","trigger":"renamed"}"#)
            #expect(highlight.status == .created)
            #expect(try await api.verify(id, alice, as: "alice").status == .ok)

            #expect(batcher.known.hits.load(ordering: .relaxed) == 3)
            #expect(batcher.known.refusals.load(ordering: .relaxed) == 0)
            #expect(try await Self.decidedInOneCommit(api.db) == 3)
        }
    }

    @Test(
        "known premises: a challenge this process issued, used by another request or expired since: the commit refuses, the group reads and is refused",
        arguments: challengeChanges)
    func knownChallengeChanged(reason: String, change: String) async throws {
        try await withAPI { api in
            let (id, people) = try await Self.collaboration(api, people: 1)
            let batcher = Self.plainBatcher(api)
            #expect(Self.grantedTo(await batcher.decide([try await Self.issuedSubmission(api, batcher, id, people[0], as: "alice")])[0]) == "alice")
            let submission = try await Self.issuedSubmission(api, batcher, id, people[0], as: "alice")
            try await Self.changeChallenge(api.db, submission.challengeId, change)
            let results = await batcher.decide([submission])

            #expect(Self.reason(results[0]) == reason)
            #expect(batcher.known.hits.load(ordering: .relaxed) == 1)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'ProofRejected'") == 1)
            // The refused request did not take the challenge.
            #expect(
                try await Self.count(
                    api.db,
                    """
                    SELECT count(*) FROM ledger_challenges c JOIN ledger_proof_requests r ON r.request_id = c.used_by_request
                    WHERE r.status = 'rejected'
                    """) == 0)
        }
    }

    @Test("one commit: a group refused on every attempt takes the storing path and is decided there, once")
    func refusedEveryTime() async throws {
        try await withAPI { api in
            let (id, people) = try await Self.collaboration(api, people: 1)
            let submission = try await Self.submission(api, id, people[0], as: "alice")
            let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
            // Between each read and its commit, the collaboration moves on (a notice, no change of members).
            let (batcher, reads) = Self.batcher(api, times: nil) {
                _ = try await Collaborations(store: store).decideAndAppend(id) { _ in
                    .init(
                        events: [.highlightPosted(.init(kind: .persistence, trigger: nil, mentionedRootHash: nil, account: "devin"))],
                        metadata: EventMetadata(actor: "devin"))
                }
            }
            let results = await batcher.decide([submission])

            #expect(reads.value == ProofBatcher.oneCommitAttempts)
            #expect(Self.grantedTo(results[0]) == "alice")
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests WHERE created_at < decided_at") == 1)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')") == 1)
        }
    }

    /// The real store, except that before each append to a collaboration another event lands
    /// on that collaboration first (a notice, through the real store): every append conflicts.
    struct MovingStore: EventStore {
        let base: PostgresEventStore

        func moveOn(_ streamId: String) async throws {
            guard streamId.hasPrefix(Streams.collaborationPrefix) else { return }
            let notice = CollaborationEvent.highlightPosted(.init(kind: .persistence, trigger: nil, mentionedRootHash: nil, account: "devin"))
            _ = try await base.append(.init(streamId: streamId, expectedVersion: .any, events: [notice.newEvent(metadata: .init(actor: "devin"))]))
        }
        func moveOnEverything(_ db: PostgresClient) async throws {
            var streams: [String] = []
            for try await id in try await db.query("SELECT stream_id FROM ledger_streams").decode(String.self) { streams.append(id) }
            for id in streams { try await moveOn(id) }
        }
        func append(_ request: AppendRequest) async throws -> AppendResult {
            try await moveOn(request.streamId)
            return try await base.append(request)
        }
        func appendAll(_ requests: [AppendRequest]) async -> [Result<AppendResult, any Error>] {
            for request in requests { try? await moveOn(request.streamId) }
            return await base.appendAll(requests)
        }
        func readStream(_ streamId: String, afterVersion: Int64) async throws -> [RecordedEvent] {
            try await base.readStream(streamId, afterVersion: afterVersion)
        }
        func readAll(after position: Int64, limit: Int) async throws -> [RecordedEvent] { try await base.readAll(after: position, limit: limit) }
        func head() async throws -> LogHead { try await base.head() }
        func streamState(_ streamId: String) async throws -> StreamState? { try await base.streamState(streamId) }
        func streamStates(_ streamIds: [String]) async throws -> [String: StreamState] { try await base.streamStates(streamIds) }
    }

    @Test("a proof whose collaboration changes under every attempt to decide it is answered 202 with its status URL, not 409; it stays pending for a worker")
    func conflictsEveryTime() async throws {
        let link: LinkFactory = { client, store in
            // Every path of `ledger serve` meets a collaboration that moves on before each of its appends.
            let moving = MovingStore(base: store)
            return VerifierLink(
                batcher: ProofBatcher(
                    // A group's deadline is its claim: ample, so a loaded machine still runs every attempt.
                    client: client, store: moving, logger: Logger(label: "test"), claim: .seconds(60),
                    hooks: .init(afterRead: { try await moving.moveOnEverything(client) })),
                localDecider: ProofDecider(client: client, store: moving, logger: Logger(label: "test")), verdicts: nil)
        }
        try await withAPI(verifier: link) { api in
            let (id, people) = try await Self.collaboration(api, people: 1)
            let r = try await api.verify(id, people[0], as: "alice")
            #expect(r.status == .accepted, "\(r.raw)")
            #expect(r.body["status"]?.string == "pending")
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type IN ('AccessGranted', 'ProofRejected')") == 0)

            // Stored and pending, its challenge used by it: a decider on the plain store (a worker's,
            // once the claim lapses) grants it, and the status URL says so.
            var pending: [UUID] = []
            for try await requestId in try await api.db.query("SELECT request_id FROM ledger_proof_requests WHERE status = 'pending'").decode(UUID.self) {
                pending.append(requestId)
            }
            #expect(pending.count == 1)
            let decider = ProofDecider(
                client: api.db, store: PostgresEventStore(client: api.db, logger: Logger(label: "test")), logger: Logger(label: "test"))
            let verdict = try await decider.decide(try #require(pending.first))
            #expect(verdict.map { if case .granted = $0 { true } else { false } } == true, "\(String(describing: verdict))")
            let status = try await api.call(.get, r.body["statusUrl"]!.string!, as: "alice")
            #expect(status.body["status"]?.string == "granted", "\(status.raw)")
        }
    }

    @Test("turns: disjoint keys go at once; a shared key waits for its holder, and a later taker waits behind an earlier one it shares a key with")
    func turns() async throws {
        let turns = Turns()
        await turns.take(["a"])
        await turns.take(["c"])  // disjoint: at once
        let second = Task { await turns.take(["a", "b"]) }
        try await waitUntil("the second taker waits for a") { await turns.waiters == 1 }
        let third = Task { await turns.take(["b"]) }  // b is free, but the second taker asked for it first
        try await waitUntil("the third taker waits behind the second") { await turns.waiters == 2 }

        await turns.give(["a"])
        try await withDeadline(.seconds(10), "the second taker's turn") { await second.value }
        #expect(await turns.waiters == 1, "the third taker still waits: the second holds b")
        await turns.give(["a", "b"])
        try await withDeadline(.seconds(10), "the third taker's turn") { await third.value }
        #expect(await turns.waiters == 0)
    }

    @Test("a process that stops after storing a group: its claim keeps workers off the requests until it lapses, then each is decided once")
    func claimLapses() async throws {
        try await withAPI { api in
            let (id, people) = try await Self.collaboration(api, people: 2)
            let store = PostgresEventStore(client: api.db, logger: Logger(label: "test"))
            let stopping = ProofBatcher(
                client: api.db, store: store, logger: Logger(label: "test"), claim: .seconds(2),
                hooks: .init(afterStore: { _ in throw Killed() }))
            let submissions = [
                try await Self.submission(api, id, people[0], as: "alice"), try await Self.submission(api, id, people[1], as: "bob"),
            ]
            let outcomes = await stopping.decide(submissions)
            let ids = try outcomes.map { outcome -> UUID in
                guard case .success(.stored(let requestId)) = outcome else { throw Killed() }
                return requestId
            }
            #expect(ids.count == 2)
            // Stored, challenges used by them, nothing in the log, and no worker takes them yet.
            #expect(
                try await Self.count(
                    api.db, "SELECT count(*) FROM ledger_proof_requests WHERE status = 'pending' AND claimed_until > now()") == 2)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_challenges WHERE used_by_request = ANY(\(ids))") == 2)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'AccessGranted'") == 0)
            let decider = ProofDecider(client: api.db, store: store, logger: Logger(label: "test"))
            #expect(try await decider.pending(limit: 10).isEmpty, "claimed requests are not offered to workers")

            // Once the claim lapses, a worker's sweep decides them, each once.
            let worker = VerifierWorker(
                decider: decider,
                requests: NotificationHub(client: api.db, channel: VerifierChannels.requests, logger: Logger(label: "test")),
                logger: Logger(label: "test"))
            try await waitUntil(timeout: .seconds(20), "the claim to lapse") { try await !decider.pending(limit: 10).isEmpty }
            #expect(await worker.sweep() == 2)
            #expect(
                try await Self.count(
                    api.db, "SELECT count(*) FROM ledger_proof_requests WHERE status = 'granted' AND claimed_until IS NULL") == 2)
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'AccessGranted'") == 2)
        }
    }

    @Test("a group handed back after storing is decided one by one: over HTTP the answer is the same, and the verdict is logged once")
    func handedBack() async throws {
        let link: LinkFactory = { client, store in
            VerifierLink(
                batcher: ProofBatcher(
                    client: client, store: store, logger: Logger(label: "test"), hooks: .init(afterStore: { _ in throw Killed() })),
                localDecider: ProofDecider(client: client, store: store, logger: Logger(label: "test")), verdicts: nil)
        }
        try await withAPI(verifier: link) { api in
            let (id, people) = try await Self.collaboration(api, people: 1)
            let r = try await api.verify(id, people[0], as: "alice")
            #expect(r.status == .ok, "\(r.raw)")
            #expect(r.body["status"]?.string == "granted")
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_events WHERE event_type = 'AccessGranted'") == 1)
            #expect(
                try await Self.count(
                    api.db, "SELECT count(*) FROM ledger_proof_requests WHERE status = 'granted' AND claimed_until IS NULL") == 1)
            // A well-formed proof to a collaboration that does not exist: 404, nothing stored.
            let challenge = try await api.challenge(id, as: "alice")
            let missing = try await api.call(
                .post, "/v1/collaborations/\(UUID().uuidString.lowercased())/proofs", as: "alice",
                json: proofBody(people[0], device: 0, challenge: challenge, der: true))
            #expect(missing.status == .notFound, "\(missing.raw)")
            #expect(try await Self.count(api.db, "SELECT count(*) FROM ledger_proof_requests") == 1)
        }
    }
}
