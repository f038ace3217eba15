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

    /// The pseudonyms and commitments `events` name, to look up.
    public static func references(_ events: [RecordedEvent]) -> (pseudonyms: Set<String>, commitments: Set<String>) {
        var (pseudonyms, commitments): (Set<String>, Set<String>) = ([], [])
        for event in events {
            guard case .object(let data)? = try? CanonicalJSON.decode(JSONValue.self, from: event.data) else { continue }
            for field in PersonalData.accountFields(event.type) {
                if case .string(let text)? = data[field], PersonalData.isPseudonym(text) { pseudonyms.insert(text) }
            }
            for field in PersonalData.valueFields {
                if case .string(let text)? = data[field], PersonalData.digest(of: text) != nil { commitments.insert(text) }
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

    /// The event's data and actor as reads show them.
    public func show(_ event: RecordedEvent) throws -> (data: JSONValue, actor: String?) {
        var data = try CanonicalJSON.decode(JSONValue.self, from: event.data)
        if case .object(var fields) = data {
            for field in PersonalData.accountFields(event.type) {
                if case .string(let text)? = fields[field] { fields[field] = .string(account(text)) }
            }
            for field in PersonalData.valueFields {
                if case .string(let text)? = fields[field] { fields[field] = value(text).map(JSONValue.string) ?? .null }
            }
            data = .object(fields)
        }
        return (data, Self.actor(event).map(account))
    }

    static func actor(_ event: RecordedEvent) -> String? {
        (try? CanonicalJSON.decode(EventMetadata.self, from: event.metadata))?.actor
    }
}
