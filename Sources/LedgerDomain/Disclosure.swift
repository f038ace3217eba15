import LedgerWire

/// What reads may show of the personal values events name: each live pseudonym's account (an
/// erased one shows as `erased:<pseudonym>`) and each commitment's plaintext (null once erased).
/// Values of events older than pseudonyms and commitments are plaintext already and shown as
/// they are.
public struct Disclosure: Sendable, Equatable {
    /// Pseudonym → account, for the subjects not erased.
    public var accounts: [String: String]
    /// Commitment (as events hold it) → plaintext, for the values not erased.
    public var values: [String: String]

    public init(accounts: [String: String] = [:], values: [String: String] = [:]) {
        self.accounts = accounts
        self.values = values
    }

    /// The pseudonyms and commitments `events` name, to look up: the accounts of
    /// `PersonalData.accountFields` and the actor; the commitments wherever
    /// `PersonalData.mapValues` finds a value (share options' titles included).
    public static func references(_ events: [RecordedEvent]) -> (pseudonyms: Set<String>, commitments: Set<String>) {
        var (pseudonyms, commitments): (Set<String>, Set<String>) = ([], [])
        for event in events {
            guard let data = try? CanonicalJSON.decode(JSONValue.self, from: event.data), case .object(let fields) = data else { continue }
            for field in PersonalData.accountFields(event.type) {
                if case .string(let text)? = fields[field], PersonalData.isPseudonym(text) { pseudonyms.insert(text) }
            }
            _ = PersonalData.mapValues(in: data) { text in
                if PersonalData.digest(of: text) != nil { commitments.insert(text) }
                return .string(text)
            }
            if let actor = Self.actor(event), PersonalData.isPseudonym(actor) { pseudonyms.insert(actor) }
        }
        return (pseudonyms, commitments)
    }

    /// An account as reads show it.
    public func account(_ text: String) -> String {
        guard PersonalData.isPseudonym(text) else { return text }
        return accounts[text] ?? PersonalData.erased(text)
    }

    /// A value as reads show it: nil once its commitment's opening is erased.
    public func value(_ text: String) -> String? {
        guard PersonalData.digest(of: text) != nil else { return text }
        return values[text]
    }

    /// Share options as reads show them: the summary and titles through `value` (nil once erased).
    public func show(_ options: ShareOptions) -> ShareOptions {
        var shown = options
        shown.summary = options.summary.flatMap(value)
        for g in shown.groups.indices {
            shown.groups[g].title = shown.groups[g].title.flatMap(value)
            for o in shown.groups[g].options.indices {
                shown.groups[g].options[o].title = shown.groups[g].options[o].title.flatMap(value)
            }
        }
        return shown
    }

    /// The event's data and actor as reads show them.
    public func show(_ event: RecordedEvent) throws -> (data: JSONValue, actor: String?) {
        var data = try CanonicalJSON.decode(JSONValue.self, from: event.data)
        if case .object(var fields) = data {
            for field in PersonalData.accountFields(event.type) {
                if case .string(let text)? = fields[field] { fields[field] = .string(account(text)) }
            }
            data = PersonalData.mapValues(in: .object(fields)) { value($0).map(JSONValue.string) ?? .null }
        }
        return (data, Self.actor(event).map(account))
    }

    static func actor(_ event: RecordedEvent) -> String? {
        (try? CanonicalJSON.decode(EventMetadata.self, from: event.metadata))?.actor
    }
}
