import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerVerifier
import Logging
import PostgresNIO

/// The HTTP side of proofs: checks the shape of a submission and answers with its verdict.
/// With a batcher (`ledger serve`) the submission is decided on the grouped path; without one
/// (`ledger api`), or when the batcher hands it to the workers, it is stored and the call
/// waits on the verdict NOTIFY up to `verdictWait`, then answers "pending" with a status URL.
public struct ProofService: Sendable {
    let requests: ProofRequests
    let collaborations: CollaborationService
    let batcher: ProofBatcher?
    let verdicts: NotificationHub?
    let verdictWait: Duration
    let throttle: RejectionThrottle

    public init(
        requests: ProofRequests, collaborations: CollaborationService, batcher: ProofBatcher?, verdicts: NotificationHub?,
        verdictWait: Duration = .seconds(5), throttle: RejectionThrottle
    ) {
        self.requests = requests
        self.collaborations = collaborations
        self.batcher = batcher
        self.verdicts = verdicts
        self.verdictWait = verdictWait
        self.throttle = throttle
    }

    /// 32 random bytes for any authenticated account, on an existing collaboration.
    public func issueChallenge(collaborationId: String, caller: Caller) async throws -> ProofRequests.Challenge {
        let id = try Identifiers.collaborationId(collaborationId)
        _ = try await collaborations.currentState(id)
        return try await requests.issueChallenge(collaborationId: id, account: caller.account)
    }

    /// Checks the shape (400 for bad input, nothing stored), then reaches the verdict.
    public func submit(_ submission: ProofSubmission, caller: Caller) async throws -> Verdict {
        do {
            _ = try submission.proof.validatedKey()
        } catch let rejection as ProofRejection {
            throw DomainError.invalid(rejection.description, code: rejection.reason)
        }
        let signature = submission.signature
        guard signature.count == 64 || (signature.count >= 8 && signature.count <= 72 && signature.first == 0x30) else {
            throw DomainError.invalid("signature must be DER (up to 72 bytes) or raw r||s (64 bytes)", code: "invalid_signature_encoding")
        }
        return try await throttle.claiming(caller.account, claim: submission.requestId) { try await verdict(of: submission) }
    }

    /// Decided on the grouped path, else stored for the workers and waited for.
    private func verdict(of submission: ProofSubmission) async throws -> Verdict {
        if let batcher {
            if case .decided(let verdict) = try await batcher.submit(submission) { return verdict }
        } else {
            _ = try await collaborations.currentState(submission.collaborationId)  // 404 before storing
            try await requests.store([submission])
        }
        if let verdicts {
            return try await requests.awaitVerdict(
                requestId: submission.requestId, account: submission.account, verdicts: verdicts, timeout: verdictWait)
        }
        return try await requests.status(requestId: submission.requestId, account: submission.account)
            ?? .pending(requestId: submission.requestId)
    }

    /// The verdict of a stored request, for the status URL.
    public func status(requestId: UUID, caller: Caller) async throws -> Verdict {
        guard let verdict = try await requests.status(requestId: requestId, account: caller.account) else {
            throw DomainError(.notFound, "not_found", "proof request not found")
        }
        return verdict
    }
}
