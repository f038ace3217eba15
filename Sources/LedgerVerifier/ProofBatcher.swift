import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import NIOCore
import PostgresNIO

/// The grouped path (`ledger serve`): proof submissions queue in the process that received
/// them, and one group at a time is decided:
/// 1. one statement reads what the group needs: its collaborations' states and its challenges;
/// 2. the domain decides each submission in order (`ProofVerdict.check`, then `.event` on the
///    state the verdicts before it left); a submission to an unknown collaboration is 404;
/// 3. one CALL (`ledger_decide_proofs_committed`, Migrations/sql/0012) consumes the challenges
///    the decisions used, appends the verdicts at the versions read, records the requests
///    with their verdicts, and commits before it answers.
///
/// The CALL re-checks under its locks what may have changed since the read: each
/// collaboration's version (a command or another process appended), and each challenge still
/// unused and unexpired. When one no longer holds it writes nothing (SQLSTATE LP001, LP002),
/// and the group is read and decided once more; refused again, its requests are stored for the
/// verifier workers (`ProofDecider`), and their callers wait for those verdicts.
///
/// A process that dies before the commit stored nothing and answered nothing: its callers'
/// submissions were never acknowledged, and their challenges are still unused.
public final class ProofBatcher: Sendable {
    public enum Outcome: Sendable, Equatable {
        case decided(Verdict)
        /// Refused on every attempt: stored for the verifier workers, whose verdict to wait for.
        case handedOver(UUID)
    }

    /// Test seam: after a group's read, before its commit (on every attempt).
    public struct Hooks: Sendable {
        public var afterRead: (@Sendable () async throws -> Void)?

        public init(afterRead: (@Sendable () async throws -> Void)? = nil) {
            self.afterRead = afterRead
        }
    }

    /// Reads and commits of one group before it is handed to the workers.
    static let attempts = 2

    let client: PostgresClient
    let requests: ProofRequests
    let logger: Logger
    let deadline: Duration
    let hooks: Hooks
    private let groups: GroupQueue<ProofSubmission, Result<Outcome, any Error>>

    /// `deadline`: how long a group may take; past it (a connection lost, a stuck server) its
    /// outcome is unknown, and its callers get an error rather than a second decision.
    public init(client: PostgresClient, logger: Logger, deadline: Duration = .seconds(10), maxGroup: Int = 64, hooks: Hooks = Hooks()) {
        self.client = client
        self.requests = ProofRequests(client: client, logger: logger)
        self.logger = logger
        self.deadline = deadline
        self.hooks = hooks
        self.groups = GroupQueue(maxInFlight: 1, maxWeight: maxGroup)
    }

    /// Decides one submission with whatever else is waiting.
    public func submit(_ submission: ProofSubmission) async throws -> Outcome {
        try await groups.submit([submission]) { group in await self.decide(group) }[0].get()
    }

    func decide(_ group: [ProofSubmission]) async -> [Result<Outcome, any Error>] {
        do {
            return try await withDeadline(deadline, "deciding a group of \(group.count) proof submissions") {
                var premises = Premises()
                for number in 1...Self.attempts {
                    let attempt = try await self.attempt(group, number)
                    if let results = attempt.results { return results }
                    premises = attempt.premises
                }
                return try await self.handOver(group, premises)
            }
        } catch {
            return group.map { _ in .failure(error) }
        }
    }

    /// Steps 1 to 3 on one connection; no results when the commit was refused.
    private func attempt(_ group: [ProofSubmission], _ number: Int) async throws -> (
        results: [Result<Outcome, any Error>]?, premises: Premises
    ) {
        try await client.withConnection { connection -> ([Result<Outcome, any Error>]?, Premises) in
            let premises = try await self.read(group, connection)
            try await self.hooks.afterRead?()
            do {
                return (try await self.commit(self.plan(group, premises), connection), premises)
            } catch let error as PSQLError where ["LP001", "LP002"].contains(error.serverInfo?[.sqlState]) {
                // Nothing written: a premise moved since the read.
                self.logger.debug("verifier: a group's commit was refused", metadata: ["attempt": "\(number)", "error": "\(error)"])
                return (nil, premises)
            }
        }
    }

    /// What step 1 reads.
    struct Premises: Sendable {
        var currents: [String: Collaborations.Current] = [:]
        var challenges: [UUID: IssuedChallenge] = [:]
    }

    /// Step 1: the collaborations' states and the challenges, in one statement.
    private func read(_ group: [ProofSubmission], _ connection: PostgresConnection) async throws -> Premises {
        var collaborationOf: [String: String] = [:]
        for submission in group { collaborationOf[Streams.collaboration(submission.collaborationId)] = submission.collaborationId }
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT s.stream_id, s.version, s.position, s.state::text,
                   NULL::uuid, NULL::bytea, NULL::text, NULL::text, false, NULL::uuid
            FROM ledger_streams s WHERE s.stream_id = ANY(\(Array(collaborationOf.keys))) AND s.state IS NOT NULL
            UNION ALL
            SELECT NULL, 0, 0, NULL, c.challenge_id, c.challenge, c.collaboration_id, c.account, c.expires_at < now(), c.used_by_request
            FROM ledger_challenges c WHERE c.challenge_id = ANY(\(group.map(\.challengeId)))
            """, logger: logger)
        var premises = Premises()
        for try await (stream, version, position, state, challengeId, challenge, collaboration, account, expired, usedBy) in rows.decode(
            (String?, Int64, Int64, String?, UUID?, ByteBuffer?, String?, String?, Bool, UUID?).self)
        {
            if let stream, let id = collaborationOf[stream],
                let current = try Collaborations.Current(StreamState(version: version, state: state, position: position))
            {
                premises.currents[id] = current
            } else if let challengeId, let challenge, let collaboration, let account {
                premises.challenges[challengeId] = IssuedChallenge(
                    bytes: Array(buffer: challenge), collaborationId: collaboration, account: account, expired: expired, usedBy: usedBy)
            }
        }
        return premises
    }

    /// A collaboration's verdicts, decided in order on its state.
    struct Append: Sendable {
        var collaborationId: String
        /// The version decided on, and the state after the verdicts so far.
        var version: Int64
        var state: CollaborationState
        var verdicts: [(index: Int, checked: ProofVerdict.Checked, event: CollaborationEvent)] = []
    }

    struct Plan: Sendable {
        /// Filled for submissions to unknown collaborations (404); the others after the commit.
        var results: [Result<Outcome, any Error>?]
        var appends: [Append] = []
    }

    /// Step 2: each submission checked and decided in the domain, in the group's order. A
    /// challenge used by an earlier submission of the group is used for the later ones.
    func plan(_ group: [ProofSubmission], _ premises: Premises) -> Plan {
        var plan = Plan(results: Array(repeating: nil, count: group.count))
        var challenges = premises.challenges
        var appendOf: [String: Int] = [:]
        for (index, submission) in group.enumerated() {
            guard let current = premises.currents[submission.collaborationId] else {
                plan.results[index] = .failure(DomainError(.notFound, "not_found", "collaboration not found"))
                continue
            }
            let checked = ProofVerdict.check(submission, challenge: challenges[submission.challengeId])
            if checked.consumesChallenge { challenges[submission.challengeId]?.usedBy = submission.requestId }
            let append = appendOf[submission.collaborationId] ?? plan.appends.count
            if append == plan.appends.count {
                appendOf[submission.collaborationId] = append
                plan.appends.append(Append(collaborationId: submission.collaborationId, version: current.version, state: current.state))
            }
            let event = ProofVerdict.event(checked, state: plan.appends[append].state)
            plan.appends[append].state.apply(event)
            plan.appends[append].verdicts.append((index, checked, event))
        }
        return plan
    }

    /// Step 3: one CALL, answered after its commit; each verdict at its position in the log.
    private func commit(_ plan: Plan, _ connection: PostgresConnection) async throws -> [Result<Outcome, any Error>] {
        var results = plan.results
        guard !plan.appends.isEmpty else { return results.map { $0! } }
        var columns = DecisionColumns()
        for (number, append) in plan.appends.enumerated() { columns.add(append, number: number + 1) }
        let answer = try await connection.queryUnlessClosed(
            """
            CALL ledger_decide_proofs_committed(
                \(columns.requestIds), \(columns.collaborations), \(columns.accounts), \(columns.challengeIds), \(columns.consumes),
                \(columns.signatures), \(columns.publicKeys), \(columns.indexes), \(columns.hashes),
                \(columns.statuses), \(columns.reasons), \(columns.rootHashes), \(columns.appends), \(columns.offsets),
                \(columns.streams), \(columns.expected), \(columns.states), \(columns.counts),
                \(columns.eventIds), \(columns.types), \(columns.data), \(columns.metadata))
            """, logger: logger)
        var firstPositions: [Int64] = []
        for try await positions in answer.decode([Int64].self) { firstPositions = positions }
        guard firstPositions.count == plan.appends.count else {
            throw StoreError.invalidRequest("ledger_decide_proofs_committed answered \(firstPositions.count) positions")
        }
        for (append, first) in zip(plan.appends, firstPositions) {
            for (offset, verdict) in append.verdicts.enumerated() {
                let decided = try Verdict(event: verdict.event, position: first + Int64(offset), rejection: verdict.checked.rejection)
                decided.count()
                results[verdict.index] = .success(.decided(decided))
            }
        }
        return results.map { $0! }
    }

    /// Refused on every attempt: the submissions to known collaborations are stored for the
    /// verifier workers (the others are 404, as on the grouped path).
    private func handOver(_ group: [ProofSubmission], _ premises: Premises) async throws -> [Result<Outcome, any Error>] {
        let known = group.filter { premises.currents[$0.collaborationId] != nil }
        logger.info("verifier: a group refused on every attempt goes to the workers", metadata: ["requests": "\(known.count)"])
        try await requests.store(known)
        return group.map { submission in
            premises.currents[submission.collaborationId] == nil
                ? .failure(DomainError(.notFound, "not_found", "collaboration not found")) : .success(.handedOver(submission.requestId))
        }
    }
}
