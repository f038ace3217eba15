import Foundation
import LedgerWire

/// Start a collaboration: the sharing device's metadata.
public struct StartCollaboration: Sendable, Hashable, Codable {
    public var localIdentifier: String
    public var title: String
    public var initiatorHandle: String
    public var initiatorName: String?
    public var shareOptions: ShareOptions?

    public init(localIdentifier: String, title: String, initiatorHandle: String, initiatorName: String? = nil, shareOptions: ShareOptions? = nil) {
        self.localIdentifier = localIdentifier
        self.title = title
        self.initiatorHandle = initiatorHandle
        self.initiatorName = initiatorName
        self.shareOptions = shareOptions
    }

    public func validate() throws {
        try Limits.text(localIdentifier, "localIdentifier", max: 512)
        try Limits.text(title, "title", max: 1024, allowEmpty: true)
        try Limits.text(initiatorHandle, "initiatorHandle", max: 512)
        if let name = initiatorName { try Limits.text(name, "initiatorName", max: 512, allowEmpty: true) }
        guard let options = shareOptions else { return }
        if let summary = options.summary { try Limits.text(summary, "shareOptions.summary", max: 1024, allowEmpty: true) }
        guard options.groups.count <= 32 else { throw DomainError.invalid("at most 32 share option groups") }
        var groupIds = Set<String>()
        for group in options.groups {
            try Limits.text(group.identifier, "shareOptions.groups.identifier", max: 256)
            try Limits.text(try Limits.required(group.title, "shareOptions.groups.title"), "shareOptions.groups.title", max: 512, allowEmpty: true)
            guard groupIds.insert(group.identifier).inserted else {
                throw DomainError.invalid("share option group \(group.identifier) appears twice", code: .invalidShareOptions)
            }
            guard !group.options.isEmpty, group.options.count <= 64 else {
                throw DomainError.invalid("group \(group.identifier) must have 1 to 64 options", code: .invalidShareOptions)
            }
            var optionIds = Set<String>()
            for option in group.options {
                try Limits.text(option.identifier, "option identifier", max: 256)
                try Limits.text(try Limits.required(option.title, "option title"), "option title", max: 512, allowEmpty: true)
                guard optionIds.insert(option.identifier).inserted else {
                    throw DomainError.invalid("option \(option.identifier) appears twice in group \(group.identifier)", code: .invalidShareOptions)
                }
            }
            if group.kind == .picker {
                let selected = group.options.filter(\.selected).count
                guard selected == 1 else {
                    throw DomainError.invalid(
                        "picker group \(group.identifier) must have exactly one selected option, has \(selected)",
                        code: .invalidShareOptions)
                }
            }
        }
    }

    /// The personal values of the command, each committed to with a fresh opening: the title,
    /// the initiator's handle and (if given) name, the local identifier, and the share options'
    /// summary (if given), then each group's title followed by its options' titles, in order.
    public func commitments() -> [PersonalData.Commitment] {
        var values: [PersonalData.Commitment] = [.init(kind: .title, value: title), .init(kind: .handle, value: initiatorHandle)]
        if let initiatorName { values.append(.init(kind: .name, value: initiatorName)) }
        values.append(.init(kind: .localIdentifier, value: localIdentifier))
        guard let shareOptions else { return values }
        if let summary = shareOptions.summary { values.append(.init(kind: .summary, value: summary)) }
        for group in shareOptions.groups {
            values.append(.init(kind: .groupTitle, value: group.title ?? ""))
            values += group.options.map { PersonalData.Commitment(kind: .optionTitle, value: $0.title ?? "") }
        }
        return values
    }

    /// The first event of a new collaboration stream: the owner as a pseudonym, every personal
    /// value as `commitments()` made them (share options' identifiers, kinds and selections plain).
    public func started(
        collaborationId: String, owner: String, universalLink: String, commitments: [PersonalData.Commitment]
    ) -> CollaborationEvent {
        func committed(_ kind: PersonalData.Commitment.Kind) -> String? { commitments.first { $0.kind == kind }?.text }
        // Titles are committed in the order of the groups and options (`commitments()`).
        var groupTitles = commitments.filter { $0.kind == .groupTitle }.makeIterator()
        var optionTitles = commitments.filter { $0.kind == .optionTitle }.makeIterator()
        var options = shareOptions
        if var committedOptions = options {
            committedOptions.summary = committedOptions.summary == nil ? nil : committed(.summary)
            for g in committedOptions.groups.indices {
                committedOptions.groups[g].title = groupTitles.next()?.text
                for o in committedOptions.groups[g].options.indices { committedOptions.groups[g].options[o].title = optionTitles.next()?.text }
            }
            options = committedOptions
        }
        return .started(.init(
            collaborationId: collaborationId, localIdentifier: committed(.localIdentifier) ?? "", title: committed(.title) ?? "",
            initiatorHandle: committed(.handle) ?? "", initiatorName: committed(.name), shareOptions: options,
            owner: owner, universalLink: universalLink))
    }

    /// Whether a stored start (its values as disclosed) is this command's: a retry with the same
    /// idempotency key.
    public func isRepeated(by stored: CollaborationEvent.Started, disclosure: Disclosure) -> Bool {
        disclosure.value(stored.localIdentifier) == localIdentifier && disclosure.value(stored.title) == title
            && disclosure.value(stored.initiatorHandle) == initiatorHandle
            && stored.initiatorName.flatMap(disclosure.value) == initiatorName
            && stored.shareOptions.map { disclosure.show($0) } == shareOptions
    }
}

enum Limits {
    static func text(_ value: String, _ field: String, max: Int, allowEmpty: Bool = false) throws {
        if !allowEmpty && value.trimmingCharacters(in: .whitespaces).isEmpty {
            throw DomainError.invalid("\(field) must not be empty", code: .missingField)
        }
        if value.count > max { throw DomainError.invalid("\(field) is longer than \(max) characters") }
        if value.unicodeScalars.contains(where: { $0.value == 0 }) {
            throw DomainError.invalid("\(field) contains a NUL character")
        }
    }

    /// A field a command needs though the wire type allows null (reads show erased values so).
    static func required(_ value: String?, _ field: String) throws -> String {
        guard let value else { throw DomainError.invalid("\(field) is required", code: .missingField) }
        return value
    }
}

/// The outcome of a participants update: what changed, and the events that record it.
public struct ParticipantsDecision: Sendable, Hashable {
    public var added: [RootHash]
    public var removed: [RootHash]
    public var revokedAccounts: [String]
    public var events: [CollaborationEvent]
}

public enum CollaborationDecisions {
    /// Added and removed identities in one update, by the owner only. Adding a current identity
    /// or removing an unknown one changes nothing; a removed identity with an account revokes it.
    public static func updateParticipants(
        state: CollaborationState, actor: String, added: [RootHash], removed: [RootHash]
    ) throws -> ParticipantsDecision {
        guard actor == state.owner else {
            throw DomainError(.notOwner, "only the collaboration's owner may change its participants")
        }
        guard added.count + removed.count <= 1000 else {
            throw DomainError.invalid("at most 1000 identities per update")
        }
        let both = Set(added).intersection(removed)
        if let hash = both.first {
            throw DomainError.invalid("identity \(hash) is both added and removed", code: .conflictingIdentities)
        }
        var events: [CollaborationEvent] = []
        var addedDone: [RootHash] = []
        var removedDone: [RootHash] = []
        var revoked: [String] = []
        for hash in Set(removed).sorted() where state.isCurrent(hash) {
            let account = state.identities[hash.base64]?.account
            events.append(.identityRemoved(.init(rootHash: hash, account: account)))
            removedDone.append(hash)
            if let account {
                events.append(.accessRevoked(.init(rootHash: hash, account: account, reason: "identity_removed")))
                revoked.append(account)
            }
        }
        var seen = Set<RootHash>()
        for hash in added where seen.insert(hash).inserted && !state.isCurrent(hash) {
            events.append(.identityAdded(.init(rootHash: hash)))
            addedDone.append(hash)
        }
        return ParticipantsDecision(added: addedDone, removed: removedDone, revokedAccounts: revoked, events: events)
    }

    /// A highlight notice posted by an account with access.
    public static func postHighlight(
        state: CollaborationState, actor: String, kind: HighlightKind, trigger: String?, mentioned: RootHash?
    ) throws -> CollaborationEvent {
        guard state.hasAccess(actor) else {
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
}

extension CollaborationDecisions {
    /// The verdict on a verified root hash, decided on the collaboration's current state.
    public static func decideAccess(state: CollaborationState, rootHash: RootHash, account: String) -> ProofRejection? {
        guard let identity = state.identities[rootHash.base64] else { return .unknownIdentity }
        switch identity.status {
        case .removed: return .identityRemoved
        case .granted where identity.account != nil && identity.account != account: return .identityClaimed
        default: return nil
        }
    }
}
