import Foundation
import LedgerDomain
import LedgerStore
import Synchronization

/// What this process knows of a group's premises without asking the database: the challenges
/// it issued, and collaborations as its last read, commit or command left them. Hints, never the
/// truth: a group decided on them is committed by `ledger_decide_proofs_committed`, which
/// checks every premise again under its locks (a challenge used or expired meanwhile, a
/// collaboration changed by a command or another process), and a refused group forgets what it
/// knew and reads. Only a group whose every premise is known, with each challenge unused here
/// and clearly unexpired by this clock, skips its read; any other group (a refusal to explain,
/// an unknown collaboration, a challenge from another process) reads as before.
final class KnownPremises: Sendable {
    struct Challenge: Sendable {
        var bytes: [UInt8]
        var collaborationId: String
        var account: String
        var expiresAt: Date
    }

    private struct State {
        var challenges: [UUID: Challenge] = [:]
        var currents: [String: Collaborations.Current] = [:]
    }

    private let state = Mutex(State())
    /// Groups that found every premise known, and commits refused because a premise no longer
    /// held (for tests).
    let hits = Atomic<Int>(0)
    let refusals = Atomic<Int>(0)
    /// Bounds: past them, expired challenges are dropped, and collaborations forgotten.
    let maxChallenges: Int
    let maxCollaborations: Int
    /// A challenge this close to its expiry is read (the database's clock decides).
    let expiryMargin: TimeInterval = 1

    init(maxChallenges: Int = 50_000, maxCollaborations: Int = 4_096) {
        self.maxChallenges = maxChallenges
        self.maxCollaborations = maxCollaborations
    }

    func issued(_ challengeId: UUID, _ challenge: Challenge) {
        state.withLock { state in
            if state.challenges.count >= maxChallenges {
                let now = Date()
                state.challenges = state.challenges.filter { $0.value.expiresAt > now }
                if state.challenges.count >= maxChallenges { state.challenges.removeAll() }
            }
            state.challenges[challengeId] = challenge
        }
    }

    /// The group's premises, if every one is known.
    func premises(for group: [ProofBatcher.Stored], now: Date = Date()) -> ProofBatcher.Premises? {
        let premises = state.withLock { state -> ProofBatcher.Premises? in
            var premises = ProofBatcher.Premises()
            for request in group {
                let submission = request.submission
                guard let current = state.currents[submission.collaborationId], let challenge = state.challenges[submission.challengeId],
                    challenge.account == submission.account, challenge.collaborationId == submission.collaborationId,
                    challenge.expiresAt.timeIntervalSince(now) > expiryMargin
                else { return nil }
                premises.currents[submission.collaborationId] = current
                premises.challenges[submission.challengeId] = .init(
                    challenge: challenge.bytes, collaborationId: challenge.collaborationId, account: challenge.account, expired: false,
                    usedBy: nil)
            }
            return premises
        }
        if premises != nil { hits.add(1, ordering: .relaxed) }
        return premises
    }

    /// Collaborations as read, or as a command of this process left them.
    func learn(_ currents: [String: Collaborations.Current]) {
        state.withLock { state in
            if state.currents.count + currents.count > maxCollaborations { state.currents.removeAll() }
            for (id, current) in currents { Self.keep(id, current, in: &state) }
        }
    }

    /// After a group's commit: its collaborations as it left them; its challenges are used.
    func committed(_ decisions: ProofBatcher.Decisions, group: [ProofBatcher.Stored], firstPositions: [Int64]) {
        state.withLock { state in
            for (append, first) in zip(decisions.appends, firstPositions) {
                Self.keep(
                    append.collaborationId,
                    Collaborations.Current(
                        state: append.state, version: append.version + Int64(append.events.count),
                        position: first + Int64(append.events.count) - 1), in: &state)
            }
            for request in group { state.challenges[request.submission.challengeId] = nil }
        }
    }

    /// The later of what is known and `current`: reads, commits and commands report in any
    /// order (a read that began before a command's commit may finish after it), and a stream's
    /// version only grows.
    private static func keep(_ id: String, _ current: Collaborations.Current, in state: inout State) {
        if let known = state.currents[id], known.version >= current.version { return }
        state.currents[id] = current
    }

    /// After a refused commit: what the group relied on is no longer trusted.
    func forget(_ group: [ProofBatcher.Stored]) {
        refusals.add(1, ordering: .relaxed)
        state.withLock { state in
            for request in group {
                state.currents[request.submission.collaborationId] = nil
                state.challenges[request.submission.challengeId] = nil
            }
        }
    }
}
