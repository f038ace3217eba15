import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerVerifier
import Logging
import PostgresNIO

/// The HTTP side of proofs: checks the shape of a submission, stores it, and answers with
/// its verdict. Deciding is the verifier's: in `ledger serve` a batcher stores and decides
/// submissions in groups, and a local decider takes any it handed back one by one; otherwise,
/// or if a worker holds the request, the call waits on the verdict NOTIFY up to `verdictWait`
/// and then answers "pending" with a status URL.
public struct ProofService: Sendable {
    let requests: ProofRequests
    let collaborations: CollaborationService
    let batcher: ProofBatcher?
    let localDecider: ProofDecider?
    let verdicts: NotificationHub?
    let verdictWait: Duration
    let throttle: RejectionThrottle

    public init(
        requests: ProofRequests, collaborations: CollaborationService, batcher: ProofBatcher? = nil, localDecider: ProofDecider?,
        verdicts: NotificationHub?, verdictWait: Duration = .seconds(5), throttle: RejectionThrottle = RejectionThrottle()
    ) {
        self.requests = requests
        self.collaborations = collaborations
        self.batcher = batcher
        self.localDecider = localDecider
        self.verdicts = verdicts
        self.verdictWait = verdictWait
        self.throttle = throttle
    }

    /// 32 random bytes for any authenticated account, on an existing collaboration.
    public func issueChallenge(collaborationId: String, caller: Caller) async throws -> ProofRequests.Challenge {
        let id = try Identifiers.collaborationId(collaborationId)
        _ = try await collaborations.currentState(id)
        let challenge = try await requests.issueChallenge(collaborationId: id, account: caller.account)
        batcher?.issued(challenge, collaborationId: id, account: caller.account)
        return challenge
    }

    public struct Submission: Sendable {
        public var challengeId: UUID
        public var signature: [UInt8]
        public var proof: IdentityProof
    }

    /// Checks the shape (400 for bad input, nothing stored), stores the request, and waits
    /// (bounded) for its verdict.
    public func submit(collaborationId: String, submission: Submission, caller: Caller) async throws -> Verdict {
        let id = try Identifiers.collaborationId(collaborationId)
        if batcher == nil { _ = try await collaborations.currentState(id) }  // the batcher answers 404 itself
        do {
            _ = try submission.proof.validatedKey()
        } catch let rejection as ProofRejection {
            throw DomainError.invalid(rejection.description, code: rejection.reason)
        }
        let signature = submission.signature
        guard signature.count == 64 || (signature.count >= 8 && signature.count <= 72 && signature.first == 0x30) else {
            throw DomainError.invalid("signature must be DER (up to 72 bytes) or raw r||s (64 bytes)", code: "invalid_signature_encoding")
        }
        guard await throttle.allows(caller.account) else {
            throw DomainError(.tooManyRequests, "too_many_rejections", "too many rejected proofs from this account; try later")
        }
        let verdict = try await verdict(of: submission, signature: signature, collaborationId: id, caller: caller)
        if case .rejected = verdict { await throttle.recordRejection(caller.account) }
        return verdict
    }

    /// Stores the submission and reaches its verdict: in a group (with a batcher), else or
    /// when the group hands it back one by one, else from a worker within `verdictWait`.
    private func verdict(of submission: Submission, signature: [UInt8], collaborationId id: String, caller: Caller) async throws -> Verdict
    {
        let requestId: UUID
        if let batcher {
            switch try await batcher.submit(
                .init(
                    collaborationId: id, account: caller.account, challengeId: submission.challengeId, signature: signature,
                    proof: submission.proof))
            {
            case .decided(let verdict):
                return verdict
            case .stored(let stored):
                requestId = stored
            }
        } else {
            requestId = try await requests.store(
                collaborationId: id, account: caller.account, challengeId: submission.challengeId, signature: signature,
                proof: submission.proof)
        }
        do {
            if let verdict = try await localDecider?.decide(requestId) { return verdict }
        } catch let error as StoreError where error.isVersionConflict {
            // The collaboration changed under every attempt. The request is stored and pending:
            // a worker decides it; the caller waits for that verdict or gets the status URL.
        }
        if let verdicts {
            return try await requests.awaitVerdict(requestId: requestId, account: caller.account, verdicts: verdicts, timeout: verdictWait)
        }
        return try await requests.status(requestId: requestId, account: caller.account) ?? .pending(requestId: requestId)
    }

    /// The verdict of a stored request, for the status URL.
    public func status(requestId: UUID, caller: Caller) async throws -> Verdict {
        guard let verdict = try await requests.status(requestId: requestId, account: caller.account) else {
            throw DomainError(.notFound, "not_found", "proof request not found")
        }
        return verdict
    }
}
