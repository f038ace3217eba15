/// Why a proof was refused: a stable reason code for the 403 and the log.
public enum ProofRejection: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidKey(String)
    case invalidPath(String)
    case badSignature
    case unknownIdentity
    case identityRemoved
    case identityClaimed
    case challengeUnknown
    case challengeExpired
    case challengeUsed
    case challengeWrongAccount
    case challengeWrongCollaboration

    public var reason: String {
        switch self {
        case .invalidKey: "invalid_public_key"
        case .invalidPath: "invalid_inclusion_path"
        case .badSignature: "bad_signature"
        case .unknownIdentity: "unknown_identity"
        case .identityRemoved: "identity_removed"
        case .identityClaimed: "identity_claimed_by_another_account"
        case .challengeUnknown: "challenge_unknown"
        case .challengeExpired: "challenge_expired"
        case .challengeUsed: "challenge_used"
        case .challengeWrongAccount: "challenge_wrong_account"
        case .challengeWrongCollaboration: "challenge_wrong_collaboration"
        }
    }

    public var description: String {
        switch self {
        case .invalidKey(let m), .invalidPath(let m): "\(reason): \(m)"
        case .badSignature: "\(reason): the signature does not verify over the challenge with the proof's key"
        case .unknownIdentity: "\(reason): the root hash is not an identity of this collaboration"
        case .identityRemoved: "\(reason): the identity was removed from this collaboration"
        case .identityClaimed: "\(reason): the identity is already granted to another account"
        case .challengeUnknown: "\(reason): no such challenge was issued"
        case .challengeExpired: "\(reason): the challenge expired"
        case .challengeUsed: "\(reason): the challenge was already used"
        case .challengeWrongAccount: "\(reason): the challenge was issued to another account"
        case .challengeWrongCollaboration: "\(reason): the challenge was issued for another collaboration"
        }
    }

    /// A rejection read back from the log by its reason code (the log keeps no message details).
    public static func named(_ reason: String) -> ProofRejection {
        let known: [ProofRejection] = [
            .badSignature, .unknownIdentity, .identityRemoved, .identityClaimed, .challengeUnknown, .challengeExpired,
            .challengeUsed, .challengeWrongAccount, .challengeWrongCollaboration,
        ]
        return known.first { $0.reason == reason } ?? .invalidKey(reason)
    }
}
