/// Why an identity proof was refused: the `reason` of a 403 `proof_rejected`, each with what it
/// means. Part of the error catalogue beside `ErrorCode`: the verifier's refusals
/// (`ProofRejection` in LedgerDomain), the API's answer and the OpenAPI document
/// (`ErrorBody.reason`, checked by a test) draw from this list. The raw values are the wire
/// strings, and the strings the log's `ProofRejected` events and the stored requests keep.
public enum ProofRefusalReason: String, CaseIterable, Sendable, Codable {
    case invalidPublicKey = "invalid_public_key"
    case invalidInclusionPath = "invalid_inclusion_path"
    case badSignature = "bad_signature"
    case unknownIdentity = "unknown_identity"
    case identityRemoved = "identity_removed"
    case identityClaimed = "identity_claimed_by_another_account"
    case accessNotYetValid = "access_not_yet_valid"
    case accessExpired = "access_expired"
    case challengeUnknown = "challenge_unknown"
    case challengeExpired = "challenge_expired"
    case challengeUsed = "challenge_used"
    case challengeWrongAccount = "challenge_wrong_account"
    case challengeWrongCollaboration = "challenge_wrong_collaboration"
    /// Refused without a verdict event: no event may name a subject that is gone.
    case accountErased = "account_erased"

    /// What the reason means, for the OpenAPI document and the refusal's message.
    public var meaning: String {
        switch self {
        case .invalidPublicKey: "the proof's key is not a 65-byte uncompressed P-256 point"
        case .invalidInclusionPath: "the proof's inclusion hashes or key index are malformed"
        case .badSignature: "the signature does not verify over the challenge with the proof's key"
        case .unknownIdentity: "the root hash is not an identity of this collaboration"
        case .identityRemoved: "the identity was removed from this collaboration"
        case .identityClaimed: "the identity is already granted to another account"
        case .accessNotYetValid: "the identity's access window has not begun (notBefore is later)"
        case .accessExpired: "the identity's access window has ended (notAfter has passed)"
        case .challengeUnknown: "no such challenge was issued"
        case .challengeExpired: "the challenge expired"
        case .challengeUsed: "the challenge was already used"
        case .challengeWrongAccount: "the challenge was issued to another account"
        case .challengeWrongCollaboration: "the challenge was issued for another collaboration"
        case .accountErased: "the account's personal data was erased before the proof was decided; request a new challenge"
        }
    }

    /// The refusal's message when nothing more particular is known (a verdict read back from
    /// the log, which keeps only the reason): `reason: meaning`.
    public var message: String { "\(rawValue): \(meaning)" }
}
