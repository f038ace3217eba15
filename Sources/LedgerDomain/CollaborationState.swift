import Foundation

/// Everything a command needs to decide on one collaboration, folded from its stream. The
/// store keeps it next to the stream version, written in the same transaction as the events.
public struct CollaborationState: Codable, Sendable, Hashable {
    public enum IdentityStatus: String, Codable, Sendable { case invited, granted, removed, expired }

    public struct Identity: Codable, Sendable, Hashable {
        public var status: IdentityStatus
        public var account: String?
        /// The access window (absent bounds: none).
        public var notBefore: String?
        public var notAfter: String?
        /// How many windows this identity has had in this collaboration (each invitation and
        /// window change sets one): with `notAfter`, what an expiry's event id derives from, so
        /// a re-invitation with the same window expires again.
        public var windows: Int?

        public init(status: IdentityStatus, account: String?, window: AccessWindow? = nil, windows: Int? = nil) {
            self.status = status
            self.account = account
            self.notBefore = window?.notBefore
            self.notAfter = window?.notAfter
            self.windows = windows
        }

        public var window: AccessWindow { AccessWindow(stored: notBefore, notAfter) }

        /// Invited or granted: it may prove access within its window.
        public var isCurrent: Bool { status == .invited || status == .granted }
    }

    public var collaborationId: String
    public var owner: String
    public var title: String
    /// Identities by base64 root hash, including removed ones (for the record).
    public var identities: [String: Identity]
    /// Accounts holding access through a granted identity, with that identity.
    public var grants: [String: String]
    /// The window of identities added without one (`StartCollaboration.defaultAccess`).
    public var defaultAccess: DefaultAccess?

    init(
        collaborationId: String, owner: String, title: String, identities: [String: Identity], grants: [String: String],
        defaultAccess: DefaultAccess?
    ) {
        (self.collaborationId, self.owner, self.title) = (collaborationId, owner, title)
        (self.identities, self.grants, self.defaultAccess) = (identities, grants, defaultAccess)
    }

    public init(started: CollaborationEvent.Started) {
        collaborationId = started.collaborationId
        owner = started.owner
        title = started.title
        identities = [:]
        grants = [:]
        defaultAccess = started.defaultAccess
    }

    public mutating func apply(_ event: CollaborationEvent) {
        switch event {
        case .started:
            break
        case .identityAdded(let e):
            // Unbounded invitations leave the count as it was (nil: none yet), so states without
            // windows stay as they were.
            let before = identities[e.rootHash.base64]?.windows
            let windows = e.window.isUnbounded ? before : (before ?? 0) + 1
            identities[e.rootHash.base64] = Identity(status: .invited, account: nil, window: e.window, windows: windows)
        case .identityRemoved(let e):
            identities[e.rootHash.base64]?.status = .removed
        case .accessWindowChanged(let e):
            guard var identity = identities[e.rootHash.base64] else { break }
            (identity.notBefore, identity.notAfter) = (e.notBefore, e.notAfter)
            identity.windows = (identity.windows ?? 0) + 1
            identities[e.rootHash.base64] = identity
        case .accessExpired(let e):
            // The account stays, for the record (as after a removal): the identity is no longer
            // current, so it grants nothing.
            identities[e.rootHash.base64]?.status = .expired
            if let account = e.account, grants[account] == e.rootHash.base64 { grants[account] = nil }
        case .accessGranted(let e):
            var identity = identities[e.rootHash.base64] ?? Identity(status: .granted, account: nil)
            (identity.status, identity.account) = (.granted, e.account)
            identities[e.rootHash.base64] = identity
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

    /// True for the owner and for accounts granted through a current identity whose window holds
    /// at `now` (SPEC "A window holds at both ends": before `notBefore` a grant gives nothing).
    public func hasAccess(_ account: String, at now: Date) -> Bool {
        guard account != owner else { return true }
        guard let rootHash = grants[account], let identity = identities[rootHash] else { return false }
        return identity.window.refusal(at: now) == nil
    }

    /// Invited or granted (not removed, not expired): adding it again changes nothing, and
    /// removing it or changing its window may.
    public func isCurrent(_ rootHash: RootHash) -> Bool {
        identities[rootHash.base64]?.isCurrent ?? false
    }

    /// As `CanonicalJSON` writes it, without Foundation's coder (`CollaborationStateJSON`).
    public var json: String { CollaborationStateJSON.encode(self) }
}
