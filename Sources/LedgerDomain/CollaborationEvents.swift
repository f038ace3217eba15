import Foundation
import LedgerWire
import TransparencyLog

/// The events of a collaboration stream.
public enum CollaborationEvent: Sendable, Hashable {
    case started(Started)
    case identityAdded(IdentityAdded)
    case identityRemoved(IdentityRemoved)
    case accessGranted(AccessGranted)
    case accessRevoked(AccessRevoked)
    case proofRejected(ProofRejected)
    case highlightPosted(HighlightPosted)
    case accessWindowChanged(AccessWindowChanged)
    case accessExpired(AccessExpired)

    /// The local identifier, title, initiator's handle and name, and the share options' summary
    /// and titles are commitments (`PersonalData`; plaintext in events older than them); the
    /// owner is a pseudonym.
    public struct Started: Codable, Sendable, Hashable {
        public var collaborationId: String
        public var localIdentifier: String
        public var title: String
        public var initiatorHandle: String
        public var initiatorName: String?
        public var shareOptions: ShareOptions?
        public var owner: String
        public var universalLink: String
        /// The window of every identity added without one (absent in older starts).
        public var defaultAccess: DefaultAccess?
    }

    /// An invitation, with its access window if it has one (absent bounds: none).
    public struct IdentityAdded: Codable, Sendable, Hashable {
        public var rootHash: RootHash
        public var notBefore: String?
        public var notAfter: String?

        public init(rootHash: RootHash, window: AccessWindow? = nil) {
            self.rootHash = rootHash
            self.notBefore = window?.notBefore
            self.notAfter = window?.notAfter
        }

        public var window: AccessWindow { AccessWindow(stored: notBefore, notAfter) }
    }

    /// The owner set a current identity's window anew (absent bounds: none).
    public struct AccessWindowChanged: Codable, Sendable, Hashable {
        public var rootHash: RootHash
        public var notBefore: String?
        public var notAfter: String?

        public init(rootHash: RootHash, window: AccessWindow) {
            self.rootHash = rootHash
            self.notBefore = window.notBefore
            self.notAfter = window.notAfter
        }

        public var window: AccessWindow { AccessWindow(stored: notBefore, notAfter) }
    }

    /// The identity's window ended at `dueAt` (its `notAfter`; the event may be recorded later,
    /// after downtime): it can no longer prove access, and `account`, which held access through
    /// it, has lost it. Appended by the expiry service, its id derived from the window
    /// (`CollaborationDecisions.expiries`).
    public struct AccessExpired: Codable, Sendable, Hashable {
        public var rootHash: RootHash
        public var account: String?
        public var dueAt: String

        public init(rootHash: RootHash, account: String?, dueAt: String) {
            self.rootHash = rootHash
            self.account = account
            self.dueAt = dueAt
        }
    }

    public struct IdentityRemoved: Codable, Sendable, Hashable {
        public var rootHash: RootHash
        /// The account that had access through this identity, if any (its revocation follows).
        public var account: String?
        public init(rootHash: RootHash, account: String?) {
            self.rootHash = rootHash
            self.account = account
        }
    }

    /// A grant carries the device's whole proof (base64 as sent), so anyone can check, from
    /// the event alone, that a device of `rootHash` signed that challenge (`Evidence`).
    /// Grants recorded before the verifiable log lack `challenge`, `signature` and
    /// `inclusionHashes`.
    public struct AccessGranted: Codable, Sendable, Hashable {
        public var rootHash: RootHash
        public var account: String
        public var proofRequestId: String
        public var challengeId: String
        public var publicKey: String
        public var publicKeyIndex: UInt64
        public var challenge: String?
        public var signature: String?
        public var inclusionHashes: [String]?
        /// The identity's window when access was granted (absent: none, or a grant older than windows).
        public var notBefore: String?
        public var notAfter: String?

        public init(
            rootHash: RootHash, account: String, proofRequestId: String, challengeId: String, proof: IdentityProof,
            challenge: [UInt8], signature: [UInt8], window: AccessWindow? = nil
        ) {
            self.rootHash = rootHash
            self.account = account
            self.proofRequestId = proofRequestId
            self.challengeId = challengeId
            self.publicKey = Base64.encode(proof.publicKey)
            self.publicKeyIndex = proof.publicKeyIndex
            self.challenge = Base64.encode(challenge)
            self.signature = Base64.encode(signature)
            self.inclusionHashes = proof.inclusionHashes.map(Base64.encode)
            self.notBefore = window?.notBefore
            self.notAfter = window?.notAfter
        }
    }

    public struct AccessRevoked: Codable, Sendable, Hashable {
        public var rootHash: RootHash
        public var account: String
        public var reason: String

        public init(rootHash: RootHash, account: String, reason: String) {
            self.rootHash = rootHash
            self.account = account
            self.reason = reason
        }
    }

    public struct ProofRejected: Codable, Sendable, Hashable {
        public var account: String
        public var proofRequestId: String
        public var challengeId: String
        public var reason: String
        public var rootHash: RootHash?

        public init(account: String, proofRequestId: String, challengeId: String, reason: String, rootHash: RootHash?) {
            self.account = account
            self.proofRequestId = proofRequestId
            self.challengeId = challengeId
            self.reason = reason
            self.rootHash = rootHash
        }
    }

    public struct HighlightPosted: Codable, Sendable, Hashable {
        public var kind: HighlightKind
        public var trigger: String?
        public var mentionedRootHash: RootHash?
        public var account: String

        public init(kind: HighlightKind, trigger: String?, mentionedRootHash: RootHash?, account: String) {
            self.kind = kind
            self.trigger = trigger
            self.mentionedRootHash = mentionedRootHash
            self.account = account
        }
    }

    public static let accessGrantedType = "AccessGranted"

    public var type: String {
        switch self {
        case .started: "CollaborationStarted"
        case .identityAdded: "IdentityAdded"
        case .identityRemoved: "IdentityRemoved"
        case .accessGranted: Self.accessGrantedType
        case .accessRevoked: "AccessRevoked"
        case .proofRejected: "ProofRejected"
        case .highlightPosted: "HighlightPosted"
        case .accessWindowChanged: "AccessWindowChanged"
        case .accessExpired: "AccessExpired"
        }
    }

    /// Canonical JSON of the payload: what is stored and hashed.
    public var json: String {
        switch self {
        case .started(let e): CanonicalJSON.encode(e)
        case .identityAdded(let e): CanonicalJSON.encode(e)
        case .identityRemoved(let e): CanonicalJSON.encode(e)
        case .accessGranted(let e): CanonicalJSON.encode(e)
        case .accessRevoked(let e): CanonicalJSON.encode(e)
        case .proofRejected(let e): CanonicalJSON.encode(e)
        case .highlightPosted(let e): CanonicalJSON.encode(e)
        case .accessWindowChanged(let e): CanonicalJSON.encode(e)
        case .accessExpired(let e): CanonicalJSON.encode(e)
        }
    }

    public struct UnknownEventType: Error, CustomStringConvertible {
        public var type: String
        public var description: String { "unknown event type \(type)" }
    }

    public init(type: String, json: String) throws {
        switch type {
        case "CollaborationStarted": self = .started(try CanonicalJSON.decode(Started.self, from: json))
        case "IdentityAdded": self = .identityAdded(try CanonicalJSON.decode(IdentityAdded.self, from: json))
        case "IdentityRemoved": self = .identityRemoved(try CanonicalJSON.decode(IdentityRemoved.self, from: json))
        case "AccessGranted": self = .accessGranted(try CanonicalJSON.decode(AccessGranted.self, from: json))
        case "AccessRevoked": self = .accessRevoked(try CanonicalJSON.decode(AccessRevoked.self, from: json))
        case "ProofRejected": self = .proofRejected(try CanonicalJSON.decode(ProofRejected.self, from: json))
        case "HighlightPosted": self = .highlightPosted(try CanonicalJSON.decode(HighlightPosted.self, from: json))
        case "AccessWindowChanged": self = .accessWindowChanged(try CanonicalJSON.decode(AccessWindowChanged.self, from: json))
        case "AccessExpired": self = .accessExpired(try CanonicalJSON.decode(AccessExpired.self, from: json))
        default: throw UnknownEventType(type: type)
        }
    }

    public init(_ recorded: RecordedEvent) throws {
        try self.init(type: recorded.type, json: recorded.data)
    }

    public func newEvent(metadata: EventMetadata, id: UUID = Identifiers.timeOrderedUUID()) -> NewEvent {
        NewEvent(eventId: id, type: type, data: json, metadata: metadata.json())
    }
}
