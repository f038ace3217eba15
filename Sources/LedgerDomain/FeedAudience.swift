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
    /// Each held identity's window (`collaboration\0rootHash` → its bounds in microseconds),
    /// known from its grant and later window changes. A notice recorded before its `notBefore`, or
    /// at or after its `notAfter`, is not the account's to see, even before its `AccessExpired`
    /// is appended.
    private var windows: [String: Bounds] = [:]

    /// A held window's bounds in microseconds (nil: none at that end).
    public struct Bounds: Sendable, Equatable {
        public var start: Int64?
        public var end: Int64?
        public init(start: Int64?, end: Int64?) { (self.start, self.end) = (start, end) }
        init(_ window: AccessWindow) { (start, end) = (window.notBeforeMicros, window.notAfterMicros) }
        func holds(at: Int64) -> Bool { (start ?? .min) <= at && at < (end ?? .max) }
    }

    /// `windows`: per collaboration, the bounds of held identities that have a window.
    public init(account: String, owned: Set<String> = [], held: [String: Set<String>] = [:], windows: [String: [String: Bounds]] = [:]) {
        self.account = account
        self.owned = owned
        self.held = held.filter { !$0.value.isEmpty }
        for (collaboration, identities) in windows {
            for (rootHash, bounds) in identities { self.windows[collaboration + "\u{0}" + rootHash] = bounds }
        }
    }

    /// Whether the account sees `event` of `collaborationId`, recorded at `at` (microseconds; nil:
    /// unknown, windows not looked at); updates what it owns and holds.
    public mutating func sees(_ event: CollaborationEvent, in collaborationId: String, at: Int64? = nil) -> Bool {
        let owner = owned.contains(collaborationId)
        switch event {
        case .started(let started):
            guard started.owner == account else { return false }
            owned.insert(collaborationId)
            return true
        case .identityAdded, .identityRemoved:
            return owner
        case .accessWindowChanged(let changed):
            let key = collaborationId + "\u{0}" + changed.rootHash.base64
            if held[collaborationId]?.contains(changed.rootHash.base64) == true { windows[key] = Bounds(changed.window) }
            return owner
        case .accessGranted(let granted):
            guard granted.account == account else { return owner }
            held[collaborationId, default: []].insert(granted.rootHash.base64)
            windows[collaborationId + "\u{0}" + granted.rootHash.base64] = Bounds(AccessWindow(stored: granted.notBefore, granted.notAfter))
            return true
        case .accessRevoked(let revoked):
            guard revoked.account == account else { return owner }
            release(revoked.rootHash, in: collaborationId)
            return true
        case .accessExpired(let expired):
            guard let account = expired.account, account == self.account else { return owner }
            release(expired.rootHash, in: collaborationId)
            return true
        case .proofRejected:
            return false
        case .highlightPosted(let notice):
            guard owner || holdsAccess(in: collaborationId, at: at) else { return false }
            guard notice.kind == .mention else { return true }
            return notice.mentionedRootHash.map { held[collaborationId]?.contains($0.base64) == true } ?? false
        }
    }

    /// Whether an identity the account holds in the collaboration still grants access at `at`.
    func holdsAccess(in collaborationId: String, at: Int64?) -> Bool {
        guard let identities = held[collaborationId] else { return false }
        guard let at else { return true }
        return identities.contains { windows[collaborationId + "\u{0}" + $0]?.holds(at: at) ?? true }
    }

    private mutating func release(_ rootHash: RootHash, in collaborationId: String) {
        held[collaborationId]?.remove(rootHash.base64)
        windows[collaborationId + "\u{0}" + rootHash.base64] = nil
        if held[collaborationId]?.isEmpty == true { held[collaborationId] = nil }
    }
}
