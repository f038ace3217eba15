import Foundation
import LedgerDomain
import LedgerStore
import LedgerWire
import NIOCore
import TransparencyLog

/// Step 2 of `ProofEngine`: a group's requests decided in the domain, in order, on what step 1
/// read, grouped into one append per collaboration; then the commit's arguments.
struct ProofPlan {
    /// What step 1 reads.
    struct Premises: Sendable {
        var currents: [String: CollaborationStreams.Current] = [:]
        var challenges: [UUID: IssuedChallenge] = [:]
        /// Stored requests another worker has decided since they were listed.
        var decidedElsewhere: Set<UUID> = []
        /// Each fresh request's account → its pseudonym (a stored request holds its own).
        var subjects: [String: String] = [:]
        /// The pseudonyms known before this read (stored requests', and fresh ones' found by an
        /// earlier attempt) whose subject has been erased since.
        var erased: Set<String> = []
        /// The database's clock at the read: what windows are decided on (SPEC "One clock").
        var now = Date()
    }

    /// One request's verdict: where it is among the appends' events.
    struct Decision {
        var index: Int
        var request: ProofEngine.Request
        var checked: ProofVerdict.Checked
        var event: CollaborationEvent
    }

    /// A collaboration's verdicts, appended together at the version read.
    struct Append {
        var collaborationId: String
        var version: Int64
        /// The state after the verdicts so far.
        var state: CollaborationState
        var decisions: [Decision] = []
    }

    var premises: Premises
    /// Results known without a commit: unknown collaborations, stored requests decided elsewhere.
    private(set) var settled: [(Int, Result<Verdict?, any Error>)] = []
    /// Requests whose subject was erased before their verdict: refused without an event (no
    /// verdict may name a subject that is gone), never in an append.
    private(set) var erased: [Int] = []
    private(set) var appends: [Append] = []
    private var appendOf: [String: Int] = [:]

    /// When the group is decided (the database's clock at the read): a proof outside its
    /// identity's window is refused. The commit checks each grant's window again at the time it
    /// records it (LP005), so none is recorded after its window ended.
    var now: Date { premises.now }

    init(premises: Premises) {
        self.premises = premises
    }

    /// Decides request `index` of the group. A challenge used by an earlier request of the group
    /// is used for the later ones.
    mutating func add(_ index: Int, _ request: ProofEngine.Request) {
        var submission = request.submission
        submission.subject = request.pseudonym ?? premises.subjects[submission.account]
        if request.stored && premises.decidedElsewhere.contains(submission.requestId) {
            settled.append((index, .success(nil)))
            return
        }
        if let subject = submission.subject, premises.erased.contains(subject) {
            erased.append(index)
            return
        }
        guard let current = premises.currents[submission.collaborationId] else {
            settled.append((index, .failure(DomainError.collaborationNotFound)))
            return
        }
        let checked = ProofVerdict.check(submission, challenge: premises.challenges[submission.challengeId])
        if checked.consumesChallenge { premises.challenges[submission.challengeId]?.usedBy = submission.requestId }
        let number = appendOf[submission.collaborationId] ?? appends.count
        if number == appends.count {
            appendOf[submission.collaborationId] = number
            appends.append(Append(collaborationId: submission.collaborationId, version: current.version, state: current.state))
        }
        let event = ProofVerdict.event(checked, state: appends[number].state, now: now)
        appends[number].state.apply(event)
        appends[number].decisions.append(
            Decision(index: index, request: ProofEngine.Request(submission, stored: request.stored), checked: checked, event: event))
    }

    /// The requests the appends decide.
    var decided: [Int] { appends.flatMap { $0.decisions.map(\.index) } }

    /// The requests whose verdict is a rejection past the first `allowed[account]` of its account's
    /// (in the group's order).
    func rejectionsPast(_ allowed: [String: Int]) -> [Int] {
        var seen: [String: Int] = [:]
        return appends.flatMap(\.decisions).sorted { $0.index < $1.index }.filter { decision in
            let named = decision.request.submission.named
            guard case .proofRejected = decision.event, let limit = allowed[named] else { return false }
            seen[named, default: 0] += 1
            return seen[named]! > limit
        }.map(\.index)
    }

    /// Each decided request's verdict, once the appends are at `firstPositions`.
    func verdicts(firstPositions: [Int64]) throws -> [(Int, Verdict)] {
        try zip(appends, firstPositions).flatMap { append, first in
            try append.decisions.enumerated().map { offset, decision in
                (decision.index, try Verdict(event: decision.event, position: first + Int64(offset), rejection: decision.checked.rejection))
            }
        }
    }

    /// `ledger_commit_proofs`' arguments: the requests as JSON rows, then the appends as
    /// `ledger_append` takes them.
    struct Columns {
        var requests = ""
        var streams: [String] = [], expected: [Int64] = [], states: [String] = [], counts: [Int32] = []
        var ids: [UUID] = [], types: [String] = [], data: [String] = [], metadata: [String] = []
    }

    /// A request as `ledger_commit_proofs` reads it (see Migrations/sql/0016).
    struct Row: Encodable {
        var id: UUID, collaboration: String, account: String, challenge: UUID, consumes: Bool, stored: Bool
        var signature: String, publicKey: String, index: UInt64, hashes: [String]
        var status: String, reason: String?, rootHash: String?, append: Int, offset: Int
    }

    func columns() throws -> Columns {
        var columns = Columns()
        var rows: [Row] = []
        for (number, append) in appends.enumerated() {
            columns.streams.append(Streams.collaboration(append.collaborationId))
            columns.expected.append(append.version)
            columns.states.append(append.state.json)
            columns.counts.append(Int32(append.decisions.count))
            for (offset, decision) in append.decisions.enumerated() {
                let submission = decision.request.submission
                let verdict = Verdict.columns(of: decision.event)
                rows.append(
                    Row(
                        id: submission.requestId, collaboration: submission.collaborationId, account: submission.named,
                        challenge: submission.challengeId, consumes: decision.checked.consumesChallenge, stored: decision.request.stored,
                        signature: Base64.encode(submission.signature), publicKey: Base64.encode(submission.proof.publicKey),
                        index: submission.proof.publicKeyIndex, hashes: submission.proof.inclusionHashes.map(Base64.encode),
                        status: verdict.status, reason: verdict.reason, rootHash: verdict.rootHash?.base64, append: number + 1,
                        offset: offset))
                let event = ProofVerdict.newEvent(decision.event, for: submission)
                columns.ids.append(event.eventId)
                columns.types.append(event.type)
                columns.data.append(event.data)
                columns.metadata.append(event.metadata)
            }
        }
        columns.requests = String(decoding: try JSONEncoder().encode(rows), as: UTF8.self)
        return columns
    }
}
