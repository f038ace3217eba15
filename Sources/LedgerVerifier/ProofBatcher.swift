import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import NIOCore
import PostgresNIO

/// Decides proof submissions in groups, in the process that received them (`ledger serve`).
///
/// Deciding one proof in its own transaction (`ProofDecider`) takes three commits and about
/// ten round trips per proof. Here submissions that arrive while a group is being decided
/// queue up, and the next group takes them all (at most two groups are in flight). A group
/// is first tried on the **one-commit path** (`decideInOneCommit`, one read and one commit,
/// nothing stored before its verdicts). When the database refuses one of that path's premises
/// (a challenge used or expired, or a collaboration changed, since they were read), nothing
/// was written, and the group is read and decided again; refused on every attempt, it takes
/// the **storing path**. Groups in flight that share a collaboration take the one-commit path
/// in turn (`Turns`), so they do not refuse each other. The storing path:
/// 1. and 2. one statement reads the collaborations' current state (a submission to an
///    unknown one is answered 404 and stores nothing), stores the other requests, claimed by
///    this process for `claim`, and consumes their challenges; from its commit on, each
///    request is durable and its challenge used by it, as when a worker has decided it to
///    the point of verifying;
/// 3. signatures and Merkle paths are checked here (the domain's `IdentityProof.verify`);
/// 4. each collaboration's verdicts are decided in order on its state and appended at the
///    version read; all collaborations append at once, so the store writes them in one
///    group commit, and a collaboration changed meanwhile is read and decided again;
/// 5. one statement records the verdicts on the requests.
///
/// A process that dies between 2 and 5 leaves its requests pending: once their claim lapses,
/// any verifier worker decides them, and a verdict already appended is found by its event id
/// (derived from the request id), not appended twice. When a step after 2 fails, the group's
/// requests are answered `.stored`, and the caller decides them one by one (`ProofDecider`).
public final class ProofBatcher: Sendable {
    public struct Submission: Sendable {
        public var collaborationId: String
        public var account: String
        public var challengeId: UUID
        public var signature: [UInt8]
        public var proof: IdentityProof

        public init(collaborationId: String, account: String, challengeId: UUID, signature: [UInt8], proof: IdentityProof) {
            self.collaborationId = collaborationId
            self.account = account
            self.challengeId = challengeId
            self.signature = signature
            self.proof = proof
        }
    }

    public enum Outcome: Sendable, Equatable {
        case decided(Verdict)
        /// Stored, its challenge consumed, but not decided here: decide it with `ProofDecider`.
        case stored(UUID)
    }

    /// Test seams.
    public struct Hooks: Sendable {
        /// After a group's requests are stored, before they are decided. Set, groups take the
        /// storing path only.
        public var afterStore: (@Sendable ([UUID]) async throws -> Void)?
        /// On the one-commit path, after the premises are read (or found known), before the group's commit.
        public var afterRead: (@Sendable () async throws -> Void)?

        public init(afterStore: (@Sendable ([UUID]) async throws -> Void)? = nil, afterRead: (@Sendable () async throws -> Void)? = nil) {
            self.afterStore = afterStore
            self.afterRead = afterRead
        }
    }

    let client: PostgresClient
    let collaborations: Collaborations
    let logger: Logger
    let claim: Duration
    let hooks: Hooks
    private let groups: GroupQueue<Submission, Result<Outcome, any Error>>
    /// Groups in flight that share a collaboration take the one-commit path in turn.
    let turns = Turns()
    /// Premises a group may decide on without reading them (see `KnownPremises`).
    let known = KnownPremises()

    public init(
        client: PostgresClient, store: any EventStore, logger: Logger, claim: Duration = .seconds(10), maxGroup: Int = 64,
        maxGroupsInFlight: Int = 2, hooks: Hooks = Hooks()
    ) {
        self.client = client
        self.collaborations = Collaborations(store: store)
        self.logger = logger
        self.claim = claim
        self.hooks = hooks
        self.groups = GroupQueue(maxInFlight: maxGroupsInFlight, maxWeight: maxGroup)
    }

    /// Decides one submission with whatever else is waiting. Throws for a submission that was
    /// not stored (unknown collaboration, database unreachable).
    public func submit(_ submission: Submission) async throws -> Outcome {
        try await groups.submit([submission]) { group in await self.decide(group) }[0].get()
    }

    /// A collaboration as a command of this process left it: a group on it may decide without
    /// reading it (the commit checks it, as any known premise).
    public func collaborationChanged(_ collaborationId: String, _ current: Collaborations.Current) {
        known.learn([collaborationId: current])
    }

    /// A challenge this process issued: a group that carries it may decide without reading it.
    public func issued(_ challenge: ProofRequests.Challenge, collaborationId: String, account: String) {
        known.issued(
            challenge.challengeId,
            .init(bytes: challenge.challenge, collaborationId: collaborationId, account: account, expiresAt: challenge.expiresAt))
    }

    // MARK: One group

    /// A stored request of the group being decided.
    struct Stored: Sendable {
        var index: Int
        var requestId: UUID
        var submission: Submission
        var rootHash: RootHash?
        var rejection: ProofRejection?
        /// The challenge bytes the proof was checked against (a grant records them).
        var challenge: [UInt8]?
    }

    func decide(_ submissions: [Submission]) async -> [Result<Outcome, any Error>] {
        let group = submissions.enumerated().map { Stored(index: $0, requestId: UUID(), submission: $1) }
        // A hook on the storing path means a test is about that path.
        if hooks.afterStore == nil {
            do {
                if let results = try await decideInOneCommit(group) { return results }
            } catch {
                return submissions.map { _ in .failure(error) }
            }
        }
        // 1 and 2, one statement: the states, the requests stored, their challenges consumed.
        let stored: StoredGroup
        do {
            stored = try await storeAndConsume(group)
        } catch {
            return submissions.map { _ in .failure(error) }
        }
        var results = [Result<Outcome, any Error>?](repeating: nil, count: submissions.count)
        for request in group where stored.currents[request.submission.collaborationId] == nil {
            results[request.index] = .failure(DomainError(.notFound, "not_found", "collaboration not found"))
        }
        let known = group.filter { results[$0.index] == nil }
        // 3 to 5; on a failure the requests go on one by one.
        if !known.isEmpty {
            do {
                let decided = try await withDeadline(claim, "deciding a group of \(known.count) proof requests") {
                    try await self.hooks.afterStore?(known.map(\.requestId))
                    let checked = try await self.check(known, challenges: stored.challenges)
                    let decided = await self.appendVerdicts(checked, currents: stored.currents)
                    try await self.record(decided)
                    return decided
                }
                for (index, verdict) in decided {
                    verdict.count()
                    results[index] = .success(.decided(verdict.verdict))
                }
            } catch {
                logger.warning(
                    "verifier: a group of proof requests goes on one by one", metadata: ["requests": "\(known.count)", "error": "\(error)"])
            }
        }
        for request in known where results[request.index] == nil { results[request.index] = .success(.stored(request.requestId)) }
        return results.map { $0! }
    }

    struct StoredGroup: Sendable {
        /// The collaborations' states as the requests were stored.
        var currents: [String: Collaborations.Current]
        /// The challenge bytes of each request that consumed its challenge.
        var challenges: [UUID: [UInt8]]
    }

    /// Steps 1 and 2: one statement reads the collaborations' states, inserts the requests of
    /// known collaborations (claimed) and marks each consumable challenge used by its request
    /// (the first in the group, when several carry the same challenge).
    private func storeAndConsume(_ group: [Stored]) async throws -> StoredGroup {
        let proofs = group.map(\.submission.proof)
        let hashes = proofs.map(Self.hashesJSON)
        let claimMicros = claim.components.seconds * 1_000_000 + claim.components.attoseconds / 1_000_000_000_000
        // Through `queryUnlessClosed`: this runs before the group's deadline, and a group's
        // leader that waited for good would hold its slot for good.
        return try await client.queryUnlessClosed(
            """
            WITH input AS (
                SELECT * FROM unnest(\(group.map(\.requestId))::uuid[], \(group.map(\.submission.collaborationId))::text[],
                                     \(group.map { Streams.collaboration($0.submission.collaborationId) })::text[],
                                     \(group.map(\.submission.account))::text[], \(group.map(\.submission.challengeId))::uuid[],
                                     \(group.map { ByteBuffer(bytes: $0.submission.signature) })::bytea[],
                                     \(proofs.map { ByteBuffer(bytes: $0.publicKey) })::bytea[],
                                     \(proofs.map { Int64($0.publicKeyIndex) })::int8[], \(hashes)::text[])
                    WITH ORDINALITY
                    AS i(request_id, collaboration_id, stream_id, account, challenge_id, signature, public_key, public_key_index, hashes, n)
            ), known AS (
                SELECT i.*, s.version, s.position,
                       CASE WHEN row_number() OVER (PARTITION BY i.stream_id ORDER BY n) = 1 THEN s.state::text END AS state,
                       row_number() OVER (PARTITION BY i.challenge_id ORDER BY n) = 1 AS first_with_challenge
                FROM input i JOIN ledger_streams s USING (stream_id)
                WHERE s.state IS NOT NULL
            ), stored AS (
                INSERT INTO ledger_proof_requests
                    (request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes,
                     claimed_until)
                SELECT request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index,
                       ARRAY(SELECT decode(h, 'hex') FROM json_array_elements_text(hashes::json) WITH ORDINALITY AS e(h, n) ORDER BY n),
                       now() + \(claimMicros) * interval '1 microsecond'
                FROM known
            ), consumed AS (
                UPDATE ledger_challenges c SET used_by_request = k.request_id
                FROM known k
                WHERE k.first_with_challenge AND c.challenge_id = k.challenge_id AND c.account = k.account AND c.collaboration_id = k.collaboration_id
                  AND c.expires_at >= now() AND c.used_by_request IS NULL
                RETURNING k.request_id, c.challenge
            )
            SELECT k.request_id, k.collaboration_id, k.version, k.position, k.state, c.challenge
            FROM known k LEFT JOIN consumed c USING (request_id)
            """, logger: logger
        ) { rows in
            var stored = StoredGroup(currents: [:], challenges: [:])
            for try await (requestId, collaborationId, version, position, state, challenge)
                in rows.decode((UUID, String, Int64, Int64, String?, ByteBuffer?).self)
            {
                if let state, let current = try Collaborations.Current(StreamState(version: version, state: state, position: position)) {
                    stored.currents[collaborationId] = current
                }
                if let challenge { stored.challenges[requestId] = Array(buffer: challenge) }
            }
            return stored
        }
    }

    /// Step 3: why each unconsumed challenge was refused (one query), and the proofs checked.
    private func check(_ group: [Stored], challenges: [UUID: [UInt8]]) async throws -> [Stored] {
        let refused = group.filter { challenges[$0.requestId] == nil }
        var issued: [UUID: (collaborationId: String, account: String, expired: Bool, usedBy: UUID?)] = [:]
        if !refused.isEmpty {
            issued = try await client.queryUnlessClosed(
                """
                SELECT challenge_id, collaboration_id, account, expires_at < now(), used_by_request
                FROM ledger_challenges WHERE challenge_id = ANY(\(refused.map(\.submission.challengeId)))
                """, logger: logger
            ) { rows in
                var issued: [UUID: (collaborationId: String, account: String, expired: Bool, usedBy: UUID?)] = [:]
                for try await (id, collaboration, account, expired, usedBy) in rows.decode((UUID, String, String, Bool, UUID?).self) {
                    issued[id] = (collaboration, account, expired, usedBy)
                }
                return issued
            }
        }
        return try group.map { request in
            var request = request
            let submission = request.submission
            if let challenge = challenges[request.requestId] {
                request.challenge = challenge
                do {
                    request.rootHash = try submission.proof.verify(signature: submission.signature, challenge: challenge)
                } catch let rejection as ProofRejection {
                    request.rejection = rejection
                }
            } else {
                request.rejection = ProofDecider.challengeRefusal(
                    issued: issued[submission.challengeId], collaborationId: submission.collaborationId, account: submission.account,
                    requestId: request.requestId)
            }
            return request
        }
    }

    /// Step 4: each collaboration's verdicts decided in order on its state, all appended in
    /// one group commit (`Collaborations.decideAndAppend`). A collaboration whose append fails
    /// leaves its requests to the one-by-one path (they get no entry).
    private func appendVerdicts(
        _ group: [Stored], currents: [String: Collaborations.Current]
    ) async -> [(Int, ProofDecider.Decided)] {
        let byCollaboration = Dictionary(grouping: group, by: \.submission.collaborationId)
        let decisions = byCollaboration.mapValues { requests in
            { (state: CollaborationState) -> Collaborations.Decision in
                var state = state
                return .init(
                    entries: requests.map { request in
                        let submission = request.submission
                        let event = ProofDecider.verdictEvent(
                            account: submission.account, requestId: request.requestId, challengeId: submission.challengeId,
                            proof: submission.proof, challenge: request.challenge, signature: submission.signature,
                            rootHash: request.rootHash, rejection: request.rejection, state: state)
                        state.apply(event)
                        return .init(
                            event: event, metadata: ProofDecider.verdictMetadata(account: submission.account, requestId: request.requestId),
                            id: ProofDecider.verdictEventId(request.requestId))
                    })
            }
        }
        var decided: [(Int, ProofDecider.Decided)] = []
        for (collaborationId, outcome) in await collaborations.decideAndAppend(decisions, read: currents) {
            do {
                let outcome = try outcome.get()
                // Fresh requests have no verdict in the log yet; if one has, its decider answers it.
                guard let result = outcome.result, !result.duplicate else { throw AlreadyDecided() }
                for (offset, (request, event)) in zip(byCollaboration[collaborationId]!, outcome.events).enumerated() {
                    decided.append(
                        (
                            request.index,
                            try ProofDecider.Decided(
                                event: event, position: result.firstPosition + Int64(offset), account: request.submission.account,
                                requestId: request.requestId, rejection: request.rejection)
                        ))
                }
            } catch {
                logger.warning(
                    "verifier: verdicts of a collaboration go on one by one",
                    metadata: ["collaboration": "\(collaborationId)", "error": "\(error)"])
            }
        }
        return decided
    }

    struct AlreadyDecided: Error {}

    /// Step 5: the verdicts on the request rows, in one statement.
    private func record(_ decided: [(Int, ProofDecider.Decided)]) async throws {
        guard !decided.isEmpty else { return }
        let verdicts = decided.map(\.1)
        try await client.executeUnlessClosed(
            """
            UPDATE ledger_proof_requests r
            SET status = d.status, reason = NULLIF(d.reason, ''), root_hash = NULLIF(d.root_hash, ''::bytea),
                decided_position = d.position, decided_at = now(), claimed_until = NULL
            FROM unnest(\(verdicts.map(\.requestId))::uuid[], \(verdicts.map(\.status))::text[], \(verdicts.map { $0.reason ?? "" })::text[],
                        \(verdicts.map { ByteBuffer(bytes: $0.rootHash?.bytes ?? []) })::bytea[], \(verdicts.map(\.position))::int8[])
                AS d(request_id, status, reason, root_hash, position)
            WHERE r.request_id = d.request_id AND r.status = 'pending'
            """, logger: logger)
    }

    /// A proof's inclusion hashes as a JSON array of hex strings, for statements that store
    /// them as `bytea[]` (PostgresNIO does not bind arrays of arrays).
    static func hashesJSON(_ proof: IdentityProof) -> String {
        "[" + proof.inclusionHashes.map { "\"\(hex($0))\"" }.joined(separator: ",") + "]"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
