import Foundation

/// A challenge as the ledger issued it, read with the facts that change over time.
public struct IssuedChallenge: Sendable, Hashable {
    public var bytes: [UInt8]
    public var collaborationId: String
    public var account: String
    /// Past its expiry by the database's clock when it was read.
    public var expired: Bool
    /// The request that used it, if any.
    public var usedBy: UUID?

    public init(bytes: [UInt8], collaborationId: String, account: String, expired: Bool, usedBy: UUID?) {
        self.bytes = bytes
        self.collaborationId = collaborationId
        self.account = account
        self.expired = expired
        self.usedBy = usedBy
    }

    /// The rule, the one place it is written: a submission may use a challenge issued to its
    /// account for its collaboration, unexpired, and unused (or used by this very request: a
    /// decision taken again after its decider died). Nil when it may; otherwise why not.
    public func refusal(for submission: ProofSubmission) -> ProofRejection? {
        if account != submission.named { return .challengeWrongAccount }
        if collaborationId != submission.collaborationId { return .challengeWrongCollaboration }
        if let usedBy, usedBy != submission.requestId { return .challengeUsed }
        if expired { return .challengeExpired }
        return nil
    }
}
