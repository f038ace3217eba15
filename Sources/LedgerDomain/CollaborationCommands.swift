import Foundation
import LedgerWire

/// Start a collaboration: the sharing device's metadata.
public struct StartCollaboration: Sendable, Hashable, Codable {
    public var localIdentifier: String
    public var title: String
    public var initiatorHandle: String
    public var initiatorName: String?
    public var shareOptions: ShareOptions?
    /// The window every identity added without one gets (SPEC "Time-bound access").
    public var defaultAccess: DefaultAccess?

    public init(
        localIdentifier: String, title: String, initiatorHandle: String, initiatorName: String? = nil, shareOptions: ShareOptions? = nil,
        defaultAccess: DefaultAccess? = nil
    ) {
        self.localIdentifier = localIdentifier
        self.title = title
        self.initiatorHandle = initiatorHandle
        self.initiatorName = initiatorName
        self.shareOptions = shareOptions
        self.defaultAccess = defaultAccess
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
            try Limits.text(
                try Limits.required(group.title, "shareOptions.groups.title"), "shareOptions.groups.title", max: 512, allowEmpty: true)
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
                    throw DomainError.invalid(
                        "option \(option.identifier) appears twice in group \(group.identifier)", code: .invalidShareOptions)
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
                for o in committedOptions.groups[g].options.indices {
                    committedOptions.groups[g].options[o].title = optionTitles.next()?.text
                }
            }
            options = committedOptions
        }
        return .started(
            .init(
                collaborationId: collaborationId, localIdentifier: committed(.localIdentifier) ?? "", title: committed(.title) ?? "",
                initiatorHandle: committed(.handle) ?? "", initiatorName: committed(.name), shareOptions: options,
                owner: owner, universalLink: universalLink, defaultAccess: defaultAccess))
    }

    /// Whether a stored start (its values as disclosed) is this command's: a retry with the same
    /// idempotency key.
    public func isRepeated(by stored: CollaborationEvent.Started, disclosure: Disclosure) -> Bool {
        disclosure.value(stored.localIdentifier) == localIdentifier && disclosure.value(stored.title) == title
            && disclosure.value(stored.initiatorHandle) == initiatorHandle
            && stored.initiatorName.flatMap(disclosure.value) == initiatorName
            && stored.shareOptions.map { disclosure.show($0) } == shareOptions && stored.defaultAccess == defaultAccess
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
