import LedgerWire

/// Why a proof was refused, as the checks find it: a reason of the catalogue
/// (`ProofRefusalReason`, the 403's `reason` and the log's) and, for a malformed key or path,
/// what exactly is wrong with it.
public enum ProofRejection: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidKey(String)
    case invalidPath(String)
    case badSignature
    case unknownIdentity
    case identityRemoved
    case identityClaimed
    case accessNotYetValid
    case accessExpired
    case challengeUnknown
    case challengeExpired
    case challengeUsed
    case challengeWrongAccount
    case challengeWrongCollaboration

    public var reason: ProofRefusalReason {
        switch self {
        case .invalidKey: .invalidPublicKey
        case .invalidPath: .invalidInclusionPath
        case .badSignature: .badSignature
        case .unknownIdentity: .unknownIdentity
        case .identityRemoved: .identityRemoved
        case .identityClaimed: .identityClaimed
        case .accessNotYetValid: .accessNotYetValid
        case .accessExpired: .accessExpired
        case .challengeUnknown: .challengeUnknown
        case .challengeExpired: .challengeExpired
        case .challengeUsed: .challengeUsed
        case .challengeWrongAccount: .challengeWrongAccount
        case .challengeWrongCollaboration: .challengeWrongCollaboration
        }
    }

    /// `reason: what is wrong`, the refusal's message.
    public var description: String {
        switch self {
        case .invalidKey(let detail), .invalidPath(let detail): "\(reason.rawValue): \(detail)"
        default: reason.message
        }
    }
}
