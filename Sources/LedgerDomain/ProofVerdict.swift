import Foundation
import LedgerWire

/// The verdict on a proof submission, in two pure steps that both verifier paths take:
/// `check` (the challenge rule, then the signature and Merkle path against the challenge's
/// bytes) and `event` (the access decision on the collaboration's state as it is when the
/// verdict is appended). The verdict event's id derives from the request id, so whichever
/// decider appends a request's verdict, the log holds it once.
public enum ProofVerdict {
    /// A submission checked against its challenge: the root hash its proof leads to, or why it
    /// is refused before the collaboration's state is looked at.
    public struct Checked: Sendable {
        public var submission: ProofSubmission
        /// The challenge's bytes when the submission may use it (its decision consumes it).
        public var challenge: [UInt8]?
        public var rootHash: RootHash?
        public var rejection: ProofRejection?

        public var consumesChallenge: Bool { challenge != nil }
    }

    /// `challenge` as read (nil: never issued).
    public static func check(_ submission: ProofSubmission, challenge: IssuedChallenge?) -> Checked {
        var checked = Checked(submission: submission)
        guard let challenge else {
            checked.rejection = .challengeUnknown
            return checked
        }
        if let refusal = challenge.refusal(for: submission) {
            checked.rejection = refusal
            return checked
        }
        checked.challenge = challenge.bytes
        do {
            checked.rootHash = try submission.proof.verify(signature: submission.signature, challenge: challenge.bytes)
        } catch let rejection as ProofRejection {
            checked.rejection = rejection
        } catch {
            checked.rejection = .invalidKey("\(error)")
        }
        return checked
    }

    /// The verdict event on `state` at `now`: the check's rejection, else the access decision. A
    /// grant records the device's whole proof (the challenge's bytes and the signature as sent)
    /// and the identity's window.
    public static func event(_ checked: Checked, state: CollaborationState, now: Date) -> CollaborationEvent {
        let submission = checked.submission
        var rejection = checked.rejection
        if rejection == nil, let rootHash = checked.rootHash {
            rejection = CollaborationDecisions.decideAccess(state: state, rootHash: rootHash, account: submission.named, now: now)
        }
        let requestText = submission.requestId.uuidString.lowercased()
        let challengeText = submission.challengeId.uuidString.lowercased()
        guard rejection == nil, let rootHash = checked.rootHash, let challenge = checked.challenge else {
            return .proofRejected(
                .init(
                    account: submission.named, proofRequestId: requestText, challengeId: challengeText,
                    reason: (rejection ?? .challengeUnknown).reason.rawValue, rootHash: checked.rootHash))
        }
        return .accessGranted(
            .init(
                rootHash: rootHash, account: submission.named, proofRequestId: requestText, challengeId: challengeText,
                proof: submission.proof, challenge: challenge, signature: submission.signature,
                window: state.identities[rootHash.base64].map(\.window).flatMap { $0.isUnbounded ? nil : $0 }))
    }

    /// The verdict event ready to append: its derived id, and the account as actor.
    public static func newEvent(_ event: CollaborationEvent, for submission: ProofSubmission) -> NewEvent {
        event.newEvent(metadata: metadata(submission), id: eventId(submission.requestId))
    }

    public static func metadata(_ submission: ProofSubmission) -> EventMetadata {
        EventMetadata(actor: submission.named, causationId: submission.requestId.uuidString.lowercased())
    }

    /// The verdict event's id: whichever decider appends a request's verdict, it is this one.
    public static func eventId(_ requestId: UUID) -> UUID {
        Identifiers.derivedUUID("verdict\u{0}\(requestId.uuidString.lowercased())")
    }
}
