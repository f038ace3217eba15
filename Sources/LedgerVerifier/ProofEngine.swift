import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import Logging
import NIOCore
import PostgresNIO

/// The one way a proof is decided, whichever process runs it: the API process of `ledger serve`
/// (submissions queued and decided in groups, `submit`) or a verifier worker (stored requests,
/// `decide`). A group is
/// 1. read: its collaborations' inline states, its challenges, and which stored requests are
///    still pending, in one statement;
/// 2. decided in the domain, in order (`ProofVerdict.check`, then `.event` on the state the
///    verdicts before it left);
/// 3. committed by one CALL (Migrations/functions/ledger_commit_proofs.sql), which writes nothing
///    if a premise moved since the read (a challenge used, a collaboration appended to, a stored
///    request decided by another worker): the group is then read and decided again.
/// Decided once (the verdict's event id derives from the request id, and the commit checks the
/// request is pending), on the log's current state, and nothing is held between the read and
/// the commit: a decider that dies or hangs leaves nothing for another to wait on.
///
/// A request whose account was erased before its verdict is refused (`account_erased`) on its
/// own, without an event: no verdict may name a subject that is gone (the commit refuses one,
/// LP004), and the read sees which are gone, so the rest of its group is decided as usual
/// (issue 37: the group was refused on every attempt and every sweep, and the queue stalled).
public final class ProofEngine: Sendable {
    public struct Settings: Sendable {
        /// Requests decided in one group at most (`LEDGER_VERIFIER_CONCURRENCY`).
        public var maxGroup: Int
        /// Reads and commits of one group before its submissions get 409 `concurrent_update`.
        public var attempts = 8
        /// How long a group may take; past it (a connection lost, a stuck server) its outcome is
        /// unknown, and its callers get an error rather than a second decision.
        public var deadline: Duration = .seconds(10)
        /// Rejected proofs one account may have recorded per window; more are refused with 429.
        public var rejectionLimit = 20
        public var rejectionWindow: Duration = .seconds(60)

        public init(maxGroup: Int) { self.maxGroup = maxGroup }
    }

    /// Test seam: after a group's read, before its commit (on every attempt).
    public struct Hooks: Sendable {
        public var afterRead: (@Sendable () async throws -> Void)?
        public init(afterRead: (@Sendable () async throws -> Void)? = nil) { self.afterRead = afterRead }
    }

    /// A proof to decide: a fresh submission, or a request stored for the workers.
    public struct Request: Sendable {
        public var submission: ProofSubmission
        public var stored: Bool

        public init(_ submission: ProofSubmission, stored: Bool) {
            self.submission = submission
            self.stored = stored
        }

        /// The pseudonym it is decided under, once known: a stored request's own, or the one a
        /// fresh request's first read found (kept for the later attempts).
        var pseudonym: String? { stored ? submission.account : submission.subject }
    }

    let client: PostgresClient
    let logger: Logger
    let settings: Settings
    let hooks: Hooks
    private let queue: GroupQueue<Request, Result<Verdict?, any Error>>

    public init(client: PostgresClient, logger: Logger, settings: Settings, hooks: Hooks = Hooks()) {
        self.client = client
        self.logger = logger
        self.settings = settings
        self.hooks = hooks
        self.queue = GroupQueue(maxInFlight: 1, maxWeight: settings.maxGroup)
    }

    /// Decides one fresh submission with whatever else is waiting.
    public func submit(_ submission: ProofSubmission) async throws -> Verdict {
        let result = await queue.submit([Request(submission, stored: false)]) { group in await self.decide(group) }[0]
        guard let verdict = try result.get() else { preconditionFailure("only a stored request is decided elsewhere") }
        return verdict
    }

    /// Decides a group, one result per request in order: its verdict, or nil for a stored request
    /// that was no longer pending (another worker decided it).
    public func decide(_ group: [Request]) async -> [Result<Verdict?, any Error>] {
        do {
            return try await withDeadline(settings.deadline, "deciding a group of \(group.count) proofs") {
                var requests = group
                var results = [Result<Verdict?, any Error>?](repeating: nil, count: group.count)
                var open = Array(group.indices)
                for attempt in 1...self.settings.attempts where !open.isEmpty {
                    open = try await self.attempt(&requests, open, &results, attempt)
                }
                for index in open {
                    results[index] = .failure(DomainError(.concurrentUpdate, "the collaboration changed under every attempt; retry"))
                }
                return results.map { $0! }
            }
        } catch {
            return group.map { _ in .failure(error) }
        }
    }

    /// One read, decision and commit of the requests `open`; returns those still to decide.
    private func attempt(
        _ group: inout [Request], _ open: [Int], _ results: inout [Result<Verdict?, any Error>?], _ number: Int
    ) async throws -> [Int] {
        let premises = try await read(open.map { group[$0] })
        // A fresh request keeps the pseudonym its first read found: erased before the commit, it is
        // refused on the next attempt, rather than its account made a subject again.
        for index in open where group[index].pseudonym == nil {
            group[index].submission.subject = premises.subjects[group[index].submission.account]
        }
        try await hooks.afterRead?()
        var plan = ProofPlan(premises: premises)
        for index in open { plan.add(index, group[index]) }
        for (index, result) in plan.settled { results[index] = result }
        let erased = try await refuseErased(plan.erased.map { group[$0] })
        for (index, result) in zip(plan.erased, erased) { results[index] = result }
        guard !plan.appends.isEmpty else { return [] }
        do {
            let answer = try await commit(plan)
            if answer.throttled.isEmpty {
                for (index, verdict) in try plan.verdicts(firstPositions: answer.firstPositions) {
                    verdict.count()
                    // Answered with the account as the caller knows it (the event names its pseudonym).
                    results[index] = .success(verdict.answering(group[index].submission.account))
                }
                return []
            }
            // The throttled accounts' rejections past what they may still have are refused; the
            // rest is decided again.
            let refused = plan.rejectionsPast(answer.throttled)
            try await markThrottled(refused.filter { group[$0].stored }.map { group[$0].submission.requestId })
            let error = DomainError(
                .tooManyRejections, "too many rejected proofs from this account; retry after \(answer.retryAfter) s",
                retryAfter: answer.retryAfter)
            for index in refused { results[index] = .failure(error) }
            return plan.decided.filter { !refused.contains($0) }
        } catch let error as PSQLError where LedgerSQLState(error) != nil {
            // Nothing written: a premise moved since the read.
            logger.debug("verifier: a group's commit was refused", metadata: ["attempt": "\(number)", "error": "\(error)"])
            return plan.decided
        }
    }

    /// Step 1: the collaborations' states, the challenges, the stored requests that are no longer
    /// pending, each fresh request's subject (its account's pseudonym, made on first use) unless an
    /// earlier attempt found it, which of the pseudonyms known before are erased, and the
    /// database's clock (the decision's time), in one statement.
    private func read(_ requests: [Request]) async throws -> ProofPlan.Premises {
        let streams = Array(Set(requests.map { Streams.collaboration($0.submission.collaborationId) }))
        let stored = requests.filter(\.stored).map(\.submission.requestId)
        let accounts = Array(Set(requests.filter { $0.pseudonym == nil }.map(\.submission.account)))
        let pseudonyms = Array(Set(requests.compactMap(\.pseudonym)))
        return try await client.queryUnlessClosed(
            """
            SELECT s.stream_id, s.version, s.position, s.state::text, NULL::uuid, NULL::bytea, NULL::text, NULL::text, false, NULL::uuid
            FROM ledger_streams s WHERE s.stream_id = ANY(\(streams)) AND s.state IS NOT NULL
            UNION ALL
            SELECT NULL, 0, 0, NULL, c.challenge_id, c.challenge, c.collaboration_id, c.account, c.expires_at < now(), c.used_by_request
            FROM ledger_challenges c WHERE c.challenge_id = ANY(\(requests.map(\.submission.challengeId)))
            UNION ALL
            SELECT NULL, 0, 0, q.status, q.request_id, NULL, NULL, NULL, false, NULL
            FROM ledger_proof_requests q WHERE q.request_id = ANY(\(stored)) AND q.status <> 'pending'
            UNION ALL
            SELECT NULL, 1, 0, NULL, NULL, NULL, a.account, ledger_subject(a.account), false, NULL FROM unnest(\(accounts)::text[]) AS a(account)
            UNION ALL
            SELECT NULL, 2, 0, NULL, NULL, NULL, NULL, p.pseudonym, false, NULL FROM unnest(\(pseudonyms)::text[]) AS p(pseudonym)
            WHERE NOT EXISTS (SELECT 1 FROM ledger_subjects s WHERE s.pseudonym = p.pseudonym)
            UNION ALL
            SELECT NULL, 3, (extract(epoch FROM clock_timestamp()) * 1000000)::int8, NULL, NULL, NULL, NULL, NULL, false, NULL
            """, logger: logger
        ) { rows in
            var premises = ProofPlan.Premises()
            for try await (stream, version, position, state, id, challenge, collaboration, account, expired, usedBy) in rows.decode(
                (String?, Int64, Int64, String?, UUID?, ByteBuffer?, String?, String?, Bool, UUID?).self)
            {
                if let stream, let collaborationId = Streams.collaborationId(of: stream),
                    let current = try CollaborationStreams.Current(StreamState(version: version, state: state, position: position))
                {
                    premises.currents[collaborationId] = current
                } else if let id, let challenge, let collaboration, let account {
                    premises.challenges[id] = IssuedChallenge(
                        bytes: Array(buffer: challenge), collaborationId: collaboration, account: account, expired: expired, usedBy: usedBy)
                } else if let id {
                    premises.decidedElsewhere.insert(id)
                } else if version == 1, let collaboration, let account {
                    premises.subjects[collaboration] = account
                } else if version == 2, let account {
                    premises.erased.insert(account)
                } else if version == 3 {
                    premises.now = RecordedTime.date(micros: position)
                }
            }
            return premises
        }
    }

    struct CommitAnswer {
        var firstPositions: [Int64]
        /// Accounts over the throttle's limit, with how many more rejections each may have recorded.
        var throttled: [String: Int]
        var retryAfter: Int
    }

    /// Step 3: one CALL, answered after its commit.
    private func commit(_ plan: ProofPlan) async throws -> CommitAnswer {
        let c = try plan.columns()
        let answer = try await client.queryUnlessClosed(
            """
            CALL ledger_commit_proofs(
                \(c.requests)::json, \(Int32(settings.rejectionLimit)), \(settings.rejectionWindow.seconds) * interval '1 second',
                \(c.streams), \(c.expected), \(c.states), \(c.counts), \(c.ids), \(c.types), \(c.data), \(c.metadata))
            """, logger: logger
        ) { rows in
            for try await (positions, throttled, allowed, retryAfter) in rows.decode(([Int64]?, [String]?, [Int32]?, Int32?).self) {
                let limits = Dictionary(zip(throttled ?? [], (allowed ?? []).map(Int.init)), uniquingKeysWith: min)
                return CommitAnswer(firstPositions: positions ?? [], throttled: limits, retryAfter: Int(retryAfter ?? 1))
            }
            throw StoreError.invalidRequest("ledger_commit_proofs answered nothing")
        }
        guard !answer.throttled.isEmpty || answer.firstPositions.count == plan.appends.count else {
            throw StoreError.invalidRequest("ledger_commit_proofs answered \(answer.firstPositions.count) positions")
        }
        return answer
    }

    /// Requests whose subject was erased before their verdict, refused with `account_erased` and
    /// no event: the log's record of it is the erasure. A stored one is settled in its row
    /// (`refused`, for its submitter's poll) and its waiters are told; one another worker settled
    /// first answers nil. A fresh one (`ledger serve`) stores nothing, like a 404. Settling is safe
    /// outside the head lock: a subject erased stays erased, and no commit decides its requests.
    private func refuseErased(_ requests: [Request]) async throws -> [Result<Verdict?, any Error>] {
        guard !requests.isEmpty else { return [] }
        let ids = requests.filter(\.stored).map(\.submission.requestId)
        var settled = Set<UUID>()
        if !ids.isEmpty {
            settled = try await client.queryUnlessClosed(
                """
                WITH refused AS (
                    UPDATE ledger_proof_requests q SET status = 'refused', reason = \(ProofRefusalReason.accountErased.rawValue), decided_at = now()
                    WHERE q.request_id = ANY(\(ids)) AND q.status = 'pending'
                      AND NOT EXISTS (SELECT 1 FROM ledger_subjects s WHERE s.pseudonym = q.account)
                    RETURNING q.request_id)
                SELECT r.request_id,
                       (SELECT count(*) FROM (SELECT pg_notify(\(VerifierChannels.verdicts), t.request_id::text) FROM refused t) n)
                FROM refused r
                """, logger: logger
            ) { rows in
                var found = Set<UUID>()
                for try await (id, _) in rows.decode((UUID, Int64).self) { found.insert(id) }
                return found
            }
        }
        return requests.map { request -> Result<Verdict?, any Error> in
            if request.stored && !settled.contains(request.submission.requestId) { return .success(nil) }
            Verdict.accountErased.count()
            return .success(Verdict.accountErased)
        }
    }

    /// Stored requests the throttle refused: decided without an event, their waiters told.
    private func markThrottled(_ ids: [UUID]) async throws {
        guard !ids.isEmpty else { return }
        try await client.executeUnlessClosed(
            """
            WITH refused AS (
                UPDATE ledger_proof_requests SET status = 'throttled', decided_at = now()
                WHERE request_id = ANY(\(ids)) AND status = 'pending' RETURNING request_id)
            SELECT pg_notify(\(VerifierChannels.verdicts), request_id::text) FROM refused
            """, logger: logger)
    }
}
