import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import NIOCore
import PostgresNIO

/// The one-commit path: a group decided with one read and one commit.
///
/// 1. One statement reads the collaborations' states and the group's challenges, unless this
///    process knows them all (`KnownPremises`: challenges it issued, collaborations as its last
///    read, commit or command left them); the commit checks them either way.
/// 2. Here: each challenge's use is decided (issued to the caller for this collaboration,
///    unexpired, unused, the first in the group to carry it), signatures and Merkle paths are
///    checked, and each collaboration's verdicts are decided in order on its state.
/// 3. `ledger_decide_proofs_committed` (Migrations/sql/0010) consumes the challenges the
///    decisions used, appends the verdicts at the versions read, stores the requests already
///    decided, and commits before it answers. It checks every premise again under its locks;
///    when one no longer holds (a challenge used or expired meanwhile, a collaboration changed)
///    it writes nothing, and the group is read and decided again (`oneCommitAttempts`), then
///    goes to the storing path.
///
/// A process that dies before the commit stored nothing and answered nothing: its callers'
/// submissions were never acknowledged, and their challenges are still unused.
extension ProofBatcher {
    /// Attempts of a group on this path; refused each time, it takes the storing path.
    static let oneCommitAttempts = 3

    /// The group's results, or nil when the database refused a premise on every attempt
    /// (nothing written). A refused attempt reads afresh and decides again (another process, or
    /// a command, changed a collaboration; this process's groups take turns on one).
    /// Throws when the outcome is unknown (the connection lost, the deadline passed): the
    /// commit may have happened, so the group must not be decided a second time.
    func decideInOneCommit(_ group: [Stored]) async throws -> [Result<Outcome, any Error>]? {
        // A group that read a collaboration while another group in flight appends to it would
        // be refused (its version moved): such groups go one after the other.
        let collaborations = Set(group.map(\.submission.collaborationId))
        await turns.take(collaborations)
        do {
            let results = try await decideInOneCommitInTurn(group)
            await turns.give(collaborations)
            return results
        } catch {
            await turns.give(collaborations)
            throw error
        }
    }

    private func decideInOneCommitInTurn(_ group: [Stored]) async throws -> [Result<Outcome, any Error>]? {
        try await withDeadline(claim, "deciding a group of \(group.count) proof submissions in one commit") {
            try await self.client.withConnection { connection in
                for attempt in 1...Self.oneCommitAttempts {
                    do {
                        // The first attempt skips the read when this process knows every premise;
                        // a later one reads (the known premises did not hold).
                        let premises: Premises
                        if attempt == 1, let known = self.known.premises(for: group) {
                            premises = known
                        } else {
                            premises = try await self.readPremises(group, connection)
                            self.known.learn(premises.currents)
                        }
                        try await self.hooks.afterRead?()
                        let decisions = try self.decided(group, premises)
                        let (results, firstPositions) = try await self.commit(decisions, connection)
                        self.known.committed(decisions, group: group, firstPositions: firstPositions)
                        return results
                    } catch let error as PSQLError where error.serverInfo?[.sqlState] != nil {
                        // The server refused a statement: its transaction is rolled back, nothing written.
                        self.known.forget(group)
                        self.logger.debug(
                            "verifier: a group's premise was refused", metadata: ["attempt": "\(attempt)", "error": "\(String(reflecting: error))"])
                    }
                }
                return nil
            }
        }
    }

    struct Premises: Sendable {
        struct Issued: Sendable {
            var challenge: [UInt8]
            var collaborationId: String
            var account: String
            var expired: Bool
            var usedBy: UUID?
        }
        var currents: [String: Collaborations.Current] = [:]
        var challenges: [UUID: Issued] = [:]
    }

    /// Step 1: the collaborations' states and the challenges, in one statement.
    private func readPremises(_ group: [Stored], _ connection: PostgresConnection) async throws -> Premises {
        var collaborationOf: [String: String] = [:]
        for request in group { collaborationOf[Streams.collaboration(request.submission.collaborationId)] = request.submission.collaborationId }
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT s.stream_id, s.version, s.position, s.state::text,
                   NULL::uuid, NULL::bytea, NULL::text, NULL::text, false, NULL::uuid
            FROM ledger_streams s WHERE s.stream_id = ANY(\(Array(collaborationOf.keys))) AND s.state IS NOT NULL
            UNION ALL
            SELECT NULL, 0, 0, NULL, c.challenge_id, c.challenge, c.collaboration_id, c.account, c.expires_at < now(), c.used_by_request
            FROM ledger_challenges c WHERE c.challenge_id = ANY(\(group.map(\.submission.challengeId)))
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
                premises.challenges[challengeId] = .init(
                    challenge: Array(buffer: challenge), collaborationId: collaboration, account: account, expired: expired, usedBy: usedBy)
            }
        }
        return premises
    }

    /// A collaboration's verdicts, decided in order on its state.
    struct Append: Sendable {
        var collaborationId: String
        var requests: [Stored]
        var events: [CollaborationEvent]
        /// The collaboration's version as decided on, and its state after the verdicts.
        var version: Int64
        var state: CollaborationState
        var request: AppendRequest
    }

    struct Decisions: Sendable {
        /// Submissions to unknown collaborations: 404, not stored.
        var unknown: [Int]
        var appends: [Append]
        /// Requests whose decision used their challenge.
        var consuming: Set<UUID>
    }

    /// Step 2: challenges, proofs and verdicts.
    private func decided(_ group: [Stored], _ premises: Premises) throws -> Decisions {
        var decisions = Decisions(unknown: [], appends: [], consuming: [])
        var usedHere: [UUID: UUID] = [:]  // challenge id → the group's request that uses it
        var byCollaboration: [String: [Stored]] = [:]
        var order: [String] = []
        for var request in group {
            let submission = request.submission
            guard premises.currents[submission.collaborationId] != nil else {
                decisions.unknown.append(request.index)
                continue
            }
            let issued = premises.challenges[submission.challengeId]
            if let issued, issued.account == submission.account, issued.collaborationId == submission.collaborationId, !issued.expired,
                issued.usedBy == nil, usedHere[submission.challengeId] == nil
            {
                usedHere[submission.challengeId] = request.requestId
                decisions.consuming.insert(request.requestId)
                request.challenge = issued.challenge
                do {
                    request.rootHash = try submission.proof.verify(signature: submission.signature, challenge: issued.challenge)
                } catch let rejection as ProofRejection {
                    request.rejection = rejection
                }
            } else {
                request.rejection = ProofDecider.challengeRefusal(
                    issued: issued.map { ($0.collaborationId, $0.account, $0.expired, usedHere[submission.challengeId] ?? $0.usedBy) },
                    collaborationId: submission.collaborationId, account: submission.account, requestId: request.requestId)
            }
            if byCollaboration[submission.collaborationId] == nil { order.append(submission.collaborationId) }
            byCollaboration[submission.collaborationId, default: []].append(request)
        }
        for id in order {
            let current = premises.currents[id]!
            var state = current.state
            var events: [CollaborationEvent] = []
            var newEvents: [NewEvent] = []
            for request in byCollaboration[id]! {
                let submission = request.submission
                let event = ProofDecider.verdictEvent(
                    account: submission.account, requestId: request.requestId, challengeId: submission.challengeId,
                    proof: submission.proof, challenge: request.challenge, signature: submission.signature,
                    rootHash: request.rootHash, rejection: request.rejection, state: state)
                state.apply(event)
                events.append(event)
                newEvents.append(
                    event.newEvent(
                        metadata: ProofDecider.verdictMetadata(account: submission.account, requestId: request.requestId),
                        id: ProofDecider.verdictEventId(request.requestId)))
            }
            decisions.appends.append(
                Append(
                    collaborationId: id, requests: byCollaboration[id]!, events: events, version: current.version, state: state,
                    request: AppendRequest(
                        streamId: Streams.collaboration(id), expectedVersion: .exact(current.version), events: newEvents, state: state.json)))
        }
        return decisions
    }

    /// Step 3: one CALL, answered after its commit. The results, and each append's first position.
    private func commit(_ decisions: Decisions, _ connection: PostgresConnection) async throws -> (
        [Result<Outcome, any Error>], [Int64]
    ) {
        var results = [Result<Outcome, any Error>?](repeating: nil, count: decisions.unknown.count + decisions.appends.reduce(0) { $0 + $1.requests.count })
        for index in decisions.unknown {
            results[index] = .failure(DomainError(.notFound, "not_found", "collaboration not found"))
        }
        guard !decisions.appends.isEmpty else { return (results.map { $0! }, []) }
        var columns = RequestColumns()
        // Each append's verdicts; their positions are known after the commit.
        var verdicts: [[ProofDecider.Decided]] = []
        for (append, entry) in decisions.appends.enumerated() {
            verdicts.append([])
            for (offset, (request, event)) in zip(entry.requests, entry.events).enumerated() {
                let verdict = try ProofDecider.Decided(
                    event: event, position: 0, account: request.submission.account, requestId: request.requestId,
                    rejection: request.rejection)
                verdicts[append].append(verdict)
                columns.append(
                    request, verdict: verdict, consumes: decisions.consuming.contains(request.requestId), append: append + 1, offset: offset)
            }
        }
        let appends = decisions.appends.map(\.request)
        let events = appends.flatMap(\.events)
        let answer = try await connection.queryUnlessClosed(
            """
            CALL ledger_decide_proofs_committed(
                \(columns.requestIds), \(columns.collaborations), \(columns.accounts), \(columns.challengeIds), \(columns.consumes),
                \(columns.signatures), \(columns.publicKeys), \(columns.indexes), \(columns.hashes),
                \(columns.statuses), \(columns.reasons), \(columns.rootHashes), \(columns.appends), \(columns.offsets),
                \(appends.map(\.streamId)), \(decisions.appends.map(\.version)), \(appends.map { $0.state ?? "" }),
                \(appends.map { Int32($0.events.count) }),
                \(events.map(\.eventId)), \(events.map(\.type)), \(events.map(\.data)), \(events.map(\.metadata)))
            """, logger: logger)
        var firstPositions: [Int64]?
        for try await positions in answer.decode([Int64].self) { firstPositions = positions }
        guard let firstPositions, firstPositions.count == appends.count else {
            throw StoreError.invalidRequest("ledger_decide_proofs_committed answered \(firstPositions?.count ?? 0) positions")
        }
        for ((entry, appended), first) in zip(zip(decisions.appends, verdicts), firstPositions) {
            for (offset, (request, verdict)) in zip(entry.requests, appended).enumerated() {
                let decided = verdict.at(first + Int64(offset))
                decided.count()
                results[request.index] = .success(.decided(decided.verdict))
            }
        }
        return (results.map { $0! }, firstPositions)
    }

    /// `ledger_decide_proofs_committed`'s request columns.
    struct RequestColumns {
        var requestIds: [UUID] = [], collaborations: [String] = [], accounts: [String] = [], challengeIds: [UUID] = []
        var consumes: [Bool] = [], signatures: [ByteBuffer] = [], publicKeys: [ByteBuffer] = [], indexes: [Int64] = []
        var hashes: [String] = [], statuses: [String] = [], reasons: [String] = [], rootHashes: [ByteBuffer] = []
        var appends: [Int32] = [], offsets: [Int32] = []

        mutating func append(_ request: ProofBatcher.Stored, verdict: ProofDecider.Decided, consumes: Bool, append: Int, offset: Int) {
            let submission = request.submission
            requestIds.append(request.requestId)
            collaborations.append(submission.collaborationId)
            accounts.append(submission.account)
            challengeIds.append(submission.challengeId)
            self.consumes.append(consumes)
            signatures.append(ByteBuffer(bytes: submission.signature))
            publicKeys.append(ByteBuffer(bytes: submission.proof.publicKey))
            indexes.append(Int64(submission.proof.publicKeyIndex))
            hashes.append(ProofBatcher.hashesJSON(submission.proof))
            statuses.append(verdict.status)
            reasons.append(verdict.reason ?? "")
            rootHashes.append(ByteBuffer(bytes: verdict.rootHash?.bytes ?? []))
            appends.append(Int32(append))
            offsets.append(Int32(offset))
        }
    }
}
