import Foundation

/// A device's identity proof as submitted for an account, under the request id that follows
/// it to its verdict on either verifier path.
public struct ProofSubmission: Sendable, Hashable {
    public var requestId: UUID
    public var collaborationId: String
    public var account: String
    /// The account's pseudonym, as events and challenges name it (SPEC "Personal data"); the
    /// proof engine sets it when it reads the request's premises.
    public var subject: String?
    public var challengeId: UUID
    /// As sent: DER or raw r||s.
    public var signature: [UInt8]
    public var proof: IdentityProof

    public init(
        requestId: UUID = UUID(), collaborationId: String, account: String, challengeId: UUID, signature: [UInt8], proof: IdentityProof
    ) {
        self.requestId = requestId
        self.collaborationId = collaborationId
        self.account = account
        self.challengeId = challengeId
        self.signature = signature
        self.proof = proof
    }

    /// The name events give the account: its pseudonym once known.
    public var named: String { subject ?? account }
}
