import Foundation

/// The answer to a proof request.
public enum Verdict: Sendable, Equatable {
    case granted(rootHash: String, account: String, position: Int64)
    case rejected(reason: String, message: String, position: Int64?)
    case pending(requestId: UUID)
}

/// Notification channels between the API and the verifier workers.
public enum VerifierChannels {
    /// Payload: a request id. Sent when a request is stored.
    public static let requests = "ledger_proof_requests"
    /// Payload: a request id. Sent when its verdict is committed.
    public static let verdicts = "ledger_proof_verdicts"
}
