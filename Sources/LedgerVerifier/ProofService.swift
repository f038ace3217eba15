import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import Logging
import PostgresNIO

/// Proofs as the API sees them: challenges, submissions, their status. A submission's shape is
/// checked first (400, nothing stored); then, with an engine (`ledger serve`), it is decided in
/// this process; without one (`ledger api`), it is stored for the verifier workers and the call
/// waits on the verdict NOTIFY up to `verdictWait`, then answers "pending" with a status URL.
public struct ProofService: Sendable {
    let requests: ProofRequests
    let collaborations: CollaborationStreams
    let engine: ProofEngine?
    let verdicts: NotificationHub?
    let verdictWait: Duration
    /// The throttle's bounds for stored requests (with an engine, the engine's).
    let rejectionLimit: Int
    let rejectionWindow: Duration

    public init(
        requests: ProofRequests, store: EventStore, engine: ProofEngine?, verdicts: NotificationHub?,
        verdictWait: Duration, rejectionLimit: Int = 20, rejectionWindow: Duration = .seconds(60)
    ) {
        self.requests = requests
        self.collaborations = CollaborationStreams(store: store)
        self.engine = engine
        self.verdicts = verdicts
        self.verdictWait = verdictWait
        self.rejectionLimit = engine?.settings.rejectionLimit ?? rejectionLimit
        self.rejectionWindow = engine?.settings.rejectionWindow ?? rejectionWindow
    }

    /// 32 random bytes for any authenticated account, on an existing collaboration.
    public func issueChallenge(collaborationId: String, account: String) async throws -> ProofRequests.Challenge {
        try await requests.issueChallenge(collaborationId: try Identifiers.collaborationId(collaborationId), account: account)
    }

    /// Checks the shape (400 for bad input, nothing stored: a malformed key or path throws its
    /// `ProofRejection`, which the catalogue answers 400), then reaches the verdict.
    public func submit(_ submission: ProofSubmission) async throws -> Verdict {
        _ = try submission.proof.validatedKey()
        let signature = submission.signature
        guard signature.count == 64 || (signature.count >= 8 && signature.count <= 72 && signature.first == 0x30) else {
            throw DomainError.invalid("signature must be DER (up to 72 bytes) or raw r||s (64 bytes)", code: .invalidSignatureEncoding)
        }
        if let engine { return try await engine.submit(submission) }
        _ = try await collaborations.current(submission.collaborationId)  // 404 before storing
        try await requests.store(submission, limit: rejectionLimit, window: rejectionWindow)
        if let verdicts {
            return try await requests.awaitVerdict(
                requestId: submission.requestId, account: submission.account, verdicts: verdicts, timeout: verdictWait)
        }
        return try await requests.status(requestId: submission.requestId, account: submission.account)
            ?? .pending(requestId: submission.requestId)
    }

    /// The verdict of a stored request, for the status URL.
    public func status(requestId: UUID, account: String) async throws -> Verdict {
        guard let verdict = try await requests.status(requestId: requestId, account: account) else {
            throw DomainError(.notFound, "proof request not found")
        }
        return verdict
    }
}
