import Foundation

/// Everything a command needs to decide on one collaboration, folded from its stream. The
/// store keeps it next to the stream version, written in the same transaction as the events.
public struct CollaborationState: Codable, Sendable, Hashable {
    public enum IdentityStatus: String, Codable, Sendable { case invited, granted, removed }

    public struct Identity: Codable, Sendable, Hashable {
        public var status: IdentityStatus
        public var account: String?

        public init(status: IdentityStatus, account: String?) {
            self.status = status
            self.account = account
        }
    }

    public var collaborationId: String
    public var owner: String
    public var title: String
    /// Identities by base64 root hash, including removed ones (for the record).
    public var identities: [String: Identity]
    /// Accounts holding access through a granted identity, with that identity.
    public var grants: [String: String]

    public init(started: CollaborationEvent.Started) {
        collaborationId = started.collaborationId
        owner = started.owner
        title = started.title
        identities = [:]
        grants = [:]
    }

    public mutating func apply(_ event: CollaborationEvent) {
        switch event {
        case .started:
            break
        case .identityAdded(let e):
            identities[e.rootHash.base64] = Identity(status: .invited, account: nil)
        case .identityRemoved(let e):
            identities[e.rootHash.base64]?.status = .removed
        case .accessGranted(let e):
            identities[e.rootHash.base64] = Identity(status: .granted, account: e.account)
            grants[e.account] = e.rootHash.base64
        case .accessRevoked(let e):
            if grants[e.account] == e.rootHash.base64 { grants[e.account] = nil }
            if identities[e.rootHash.base64]?.account == e.account {
                identities[e.rootHash.base64]?.account = nil
            }
        case .proofRejected, .highlightPosted:
            break
        }
    }

    /// True for the owner and for accounts granted through a current identity.
    public func hasAccess(_ account: String) -> Bool {
        account == owner || grants[account] != nil
    }

    public func isCurrent(_ rootHash: RootHash) -> Bool {
        guard let identity = identities[rootHash.base64] else { return false }
        return identity.status != .removed
    }

    public var json: String { CanonicalJSON.encode(self) }
}
