import Foundation
import LedgerWire

/// The outcome of a participants update: what changed, and the events that record it.
public struct ParticipantsDecision: Sendable, Hashable {
    public var added: [RootHash]
    public var removed: [RootHash]
    public var revokedAccounts: [String]
    /// Identities whose window was set anew (`windows`).
    public var windowsChanged: [RootHash]
    public var events: [CollaborationEvent]
}

public enum CollaborationDecisions {
    /// Added and removed identities and changed windows in one update, by the owner only. Adding
    /// a current identity or removing an unknown one changes nothing; a removed identity with an
    /// account revokes it. An identity added without a window gets the start's `defaultAccess`
    /// from `now`. A window can be set only on a current identity (invited or granted), must end
    /// after `now`, and a window equal to the one it has changes nothing; adding a current
    /// identity with another window than its own is refused (that is a window change).
    public static func updateParticipants(
        state: CollaborationState, actor: String, added: [(RootHash, AccessWindow?)], removed: [RootHash],
        windows: [(RootHash, AccessWindow)] = [], now: Date
    ) throws -> ParticipantsDecision {
        guard actor == state.owner else {
            throw DomainError(.notOwner, "only the collaboration's owner may change its participants")
        }
        guard added.count + removed.count + windows.count <= 1000 else {
            throw DomainError.invalid("at most 1000 identities per update")
        }
        let addedHashes = added.map(\.0)
        if let hash = Set(addedHashes).intersection(removed).first {
            throw DomainError.invalid("identity \(hash) is both added and removed", code: .conflictingIdentities)
        }
        let windowed = windows.map(\.0)
        if let hash = Set(windowed).intersection(removed).first ?? Set(windowed).intersection(addedHashes).first {
            throw DomainError.invalid("identity \(hash) has a window change and is also added or removed", code: .conflictingIdentities)
        }
        if Set(windowed).count < windowed.count {
            throw DomainError.invalid("an identity's window is set twice in one update", code: .conflictingIdentities)
        }
        for hash in windowed where !state.isCurrent(hash) {
            throw DomainError(.unknownIdentity, "identity \(hash) is not a current participant; its window cannot be set")
        }
        // A window that has already ended would date an expiry before the event that set it.
        let micros = AccessWindow.micros(now)
        let given: [(RootHash, AccessWindow)] = added.compactMap { hash, window in window.map { (hash, $0) } } + windows
        for (hash, window) in given where (window.notAfterMicros ?? .max) <= micros {
            throw DomainError.invalid("identity \(hash): notAfter must be later than now", code: .invalidWindow)
        }
        for (hash, window) in added where state.isCurrent(hash) {
            if let window, state.identities[hash.base64]?.window != window {
                throw DomainError.invalid(
                    "identity \(hash) is already a participant with another window; change it through windows", code: .conflictingIdentities
                )
            }
        }
        var decision = ParticipantsDecision(added: [], removed: [], revokedAccounts: [], windowsChanged: [], events: [])
        for hash in Set(removed).sorted() where state.isCurrent(hash) {
            let account = state.identities[hash.base64]?.account
            decision.events.append(.identityRemoved(.init(rootHash: hash, account: account)))
            decision.removed.append(hash)
            if let account {
                decision.events.append(.accessRevoked(.init(rootHash: hash, account: account, reason: "identity_removed")))
                decision.revokedAccounts.append(account)
            }
        }
        var seen = Set<RootHash>()
        for (hash, window) in added where seen.insert(hash).inserted && !state.isCurrent(hash) {
            let window = window ?? state.defaultAccess?.window(from: now)
            decision.events.append(.identityAdded(.init(rootHash: hash, window: window)))
            decision.added.append(hash)
        }
        for (hash, window) in windows where state.identities[hash.base64]?.window != window {
            decision.events.append(.accessWindowChanged(.init(rootHash: hash, window: window)))
            decision.windowsChanged.append(hash)
        }
        return decision
    }

    /// A highlight notice posted by an account with access at `now`.
    public static func postHighlight(
        state: CollaborationState, actor: String, kind: HighlightKind, trigger: String?, mentioned: RootHash?, now: Date
    ) throws -> CollaborationEvent {
        guard state.hasAccess(actor, at: now) else {
            throw DomainError(.noAccess, "only accounts with access may post highlights")
        }
        switch kind {
        case .membership:
            throw DomainError.invalid(
                "membership notices follow from grants and removals; they cannot be posted", code: .invalidHighlight)
        case .mention:
            guard trigger == nil else { throw DomainError.invalid("a mention has no trigger", code: .invalidHighlight) }
            guard let mentioned else {
                throw DomainError.invalid("a mention names mentionedRootHash", code: .invalidHighlight)
            }
            guard state.isCurrent(mentioned) else {
                throw DomainError(.unknownIdentity, "the mentioned identity is not a current participant")
            }
        case .change, .persistence:
            guard let trigger, kind.triggers.contains(trigger) else {
                throw DomainError.invalid(
                    "\(kind.rawValue) highlights take a trigger of \(kind.triggers.joined(separator: ", "))",
                    code: .invalidHighlight)
            }
            guard mentioned == nil else {
                throw DomainError.invalid("only a mention names mentionedRootHash", code: .invalidHighlight)
            }
        }
        return .highlightPosted(.init(kind: kind, trigger: trigger, mentionedRootHash: mentioned, account: actor))
    }

    /// The verdict on a verified root hash at `now`, decided on the collaboration's current state:
    /// outside the identity's window it is refused, even before its `AccessExpired` is appended.
    public static func decideAccess(state: CollaborationState, rootHash: RootHash, account: String, now: Date) -> ProofRejection? {
        guard let identity = state.identities[rootHash.base64] else { return .unknownIdentity }
        switch identity.status {
        case .removed: return .identityRemoved
        case .expired: return .accessExpired
        case .granted where identity.account != nil && identity.account != account: return .identityClaimed
        default: return identity.window.refusal(at: now)
        }
    }

    /// The collaboration as it stands at `now`: the expiries due then (`expiries`) and its state
    /// with them applied. Every command decides on this, and the expiry service appends it.
    public static func expired(state: CollaborationState, now: Date) -> (
        expiries: [(event: CollaborationEvent, id: UUID)], state: CollaborationState
    ) {
        let due = expiries(state: state, now: now)
        var next = state
        for expiry in due { next.apply(expiry.event) }
        return (due, next)
    }

    /// The expiries due at `now`: an `AccessExpired` for every current identity whose `notAfter`
    /// has passed, naming the account it granted, `dueAt` its `notAfter` (however late `now`
    /// is), each with an id derived from (collaboration, identity, window count, `notAfter`), so
    /// that whoever appends it, however often it is decided, the log holds it once.
    public static func expiries(state: CollaborationState, now: Date) -> [(event: CollaborationEvent, id: UUID)] {
        let micros = AccessWindow.micros(now)
        // Every command asks (`CollaborationStreams`): the due identities are picked first, and only they sorted.
        let due = state.identities.filter { $0.value.isCurrent && ($0.value.window.notAfterMicros.map { $0 <= micros } ?? false) }
        return due.sorted { $0.key < $1.key }.compactMap { key, identity in
            guard let dueAt = identity.notAfter, let rootHash = try? RootHash(base64: key) else { return nil }
            let id = Identifiers.derivedUUID(
                "expiry\u{0}\(state.collaborationId)\u{0}\(key)\u{0}\(identity.windows ?? 0)\u{0}\(dueAt)")
            let account = identity.status == .granted ? identity.account : nil
            return (.accessExpired(.init(rootHash: rootHash, account: account, dueAt: dueAt)), id)
        }
    }
}
