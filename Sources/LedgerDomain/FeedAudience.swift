import LedgerWire

/// What one account may see of the log, as it goes (the change feed, SPEC "Change feed and
/// webhooks"): for collaborations it owns, their start and membership changes (identities
/// added and removed, grants, revocations) and notices; for those it can access, the grants
/// and revocations (and expiries) of its own account and the notices visible to it. A mention reaches only
/// the account holding the mentioned identity. From its revocation on (the revocation itself
/// included), an account no longer sees a collaboration it does not own.
///
/// Start it with what the account owned and held at the position the feed starts from, then
/// pass it every event after that position, in log order: `sees` keeps it current.
public struct FeedAudience: Sendable, Equatable {
    public let account: String
    /// Collaborations the account owns.
    public private(set) var owned: Set<String>
    /// Per collaboration, the identities (base64 root hashes) granted to the account.
    public private(set) var held: [String: Set<String>]

    public init(account: String, owned: Set<String> = [], held: [String: Set<String>] = [:]) {
        self.account = account
        self.owned = owned
        self.held = held.filter { !$0.value.isEmpty }
    }

    /// Whether the account sees `event` of `collaborationId`; updates what it owns and holds.
    public mutating func sees(_ event: CollaborationEvent, in collaborationId: String) -> Bool {
        let owner = owned.contains(collaborationId)
        switch event {
        case .started(let started):
            guard started.owner == account else { return false }
            owned.insert(collaborationId)
            return true
        case .identityAdded, .identityRemoved, .accessWindowChanged:
            return owner
        case .accessGranted(let granted):
            guard granted.account == account else { return owner }
            held[collaborationId, default: []].insert(granted.rootHash.base64)
            return true
        case .accessRevoked(let revoked):
            guard revoked.account == account else { return owner }
            held[collaborationId]?.remove(revoked.rootHash.base64)
            if held[collaborationId]?.isEmpty == true { held[collaborationId] = nil }
            return true
        case .accessExpired(let expired):
            guard let account = expired.account, account == self.account else { return owner }
            held[collaborationId]?.remove(expired.rootHash.base64)
            if held[collaborationId]?.isEmpty == true { held[collaborationId] = nil }
            return true
        case .proofRejected:
            return false
        case .highlightPosted(let notice):
            guard owner || held[collaborationId] != nil else { return false }
            guard notice.kind == .mention else { return true }
            return notice.mentionedRootHash.map { held[collaborationId]?.contains($0.base64) == true } ?? false
        }
    }
}
