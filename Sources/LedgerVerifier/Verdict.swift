import Foundation
import LedgerDomain
import LedgerWire
import Metrics

/// The answer to a proof request.
public enum Verdict: Sendable, Equatable {
    case granted(rootHash: String, account: String, position: Int64)
    case rejected(reason: ProofRefusalReason, message: String, position: Int64?)
    case pending(requestId: UUID)

    /// What a verdict event in the log answers, at its position. `rejection` is the check's own
    /// rejection, whose message says more than the reason code the log keeps.
    init(event: CollaborationEvent, position: Int64, rejection: ProofRejection? = nil) throws {
        switch event {
        case .accessGranted(let granted):
            self = .granted(rootHash: granted.rootHash.base64, account: granted.account, position: position)
        case .proofRejected(let rejected):
            let reason = try Self.reason(recorded: rejected.reason)
            let message = (rejection?.reason == reason ? rejection?.description : nil) ?? reason.message
            self = .rejected(reason: reason, message: message, position: position)
        default:
            throw VerdictEventError(description: "a proof request's verdict event has the unexpected type \(event.type)")
        }
    }

    /// A reason as the log or a request's row keeps it. One this version does not know means the
    /// log is not what this code wrote: an error, never a refusal passed on unexplained.
    static func reason(recorded: String?) throws -> ProofRefusalReason {
        guard let recorded, let reason = ProofRefusalReason(rawValue: recorded) else {
            throw VerdictEventError(description: "a proof request's verdict has the unknown reason \(recorded ?? "null")")
        }
        return reason
    }

    /// A request whose account was erased before its verdict: refused without a verdict event
    /// (none may name a subject that is gone), recorded in its row only (status `refused`).
    static let accountErased = Verdict.rejected(
        reason: .accountErased, message: ProofRefusalReason.accountErased.message, position: nil)

    /// This verdict answered to `account` (a grant's event names the account's pseudonym).
    func answering(_ account: String) -> Verdict {
        guard case .granted(let rootHash, _, let position) = self else { return self }
        return .granted(rootHash: rootHash, account: account, position: position)
    }

    /// The request row's columns for a verdict event: status, reason, root hash.
    static func columns(of event: CollaborationEvent) -> (status: String, reason: String?, rootHash: RootHash?) {
        switch event {
        case .accessGranted(let granted): ("granted", nil, granted.rootHash)
        case .proofRejected(let rejected): ("rejected", rejected.reason, rejected.rootHash)
        default: ("pending", nil, nil)
        }
    }

    /// `ledger_proof_verdicts_total{verdict}`: "granted" or the rejection's reason.
    func count() {
        let label: String
        switch self {
        case .granted: label = "granted"
        case .rejected(let reason, _, _): label = reason.rawValue
        case .pending: return
        }
        Counter(label: "ledger_proof_verdicts_total", dimensions: [("verdict", label)]).increment()
    }
}

/// A request's verdict in the log is neither a grant nor a rejection, or names a reason not in
/// the catalogue: the log is not what this code wrote.
struct VerdictEventError: Error, CustomStringConvertible {
    var description: String
}

/// Notification channels between the API and the verifier workers.
public enum VerifierChannels {
    /// Payload: a request id. Sent when a request is stored.
    public static let requests = "ledger_proof_requests"
    /// Payload: a request id. Sent when its verdict is committed.
    public static let verdicts = "ledger_proof_verdicts"
}
