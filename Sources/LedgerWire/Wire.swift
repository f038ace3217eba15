import Foundation

// Types that travel on the wire unchanged between apps and the ledger: shared by the SDK
// (`LedgerClient`) and the server targets, so neither keeps a copy. Foundation only.

/// Share options as the sharing device configured them.
public struct ShareOptions: Codable, Sendable, Hashable {
    public struct Option: Codable, Sendable, Hashable {
        public var identifier: String
        /// Required in a command; null in a read once its owner's personal data is erased.
        public var title: String?
        public var selected: Bool
        public init(identifier: String, title: String?, selected: Bool) {
            self.identifier = identifier
            self.title = title
            self.selected = selected
        }

        /// An erased title is written as null, not left out.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(identifier, forKey: .identifier)
            try c.encode(title, forKey: .title)
            try c.encode(selected, forKey: .selected)
        }
    }

    public struct Group: Codable, Sendable, Hashable {
        public enum Kind: String, Codable, Sendable { case picker, switches }
        public var identifier: String
        /// Required in a command; null in a read once its owner's personal data is erased.
        public var title: String?
        public var kind: Kind
        public var options: [Option]
        public init(identifier: String, title: String?, kind: Kind, options: [Option]) {
            self.identifier = identifier
            self.title = title
            self.kind = kind
            self.options = options
        }

        /// An erased title is written as null, not left out.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(identifier, forKey: .identifier)
            try c.encode(title, forKey: .title)
            try c.encode(kind, forKey: .kind)
            try c.encode(options, forKey: .options)
        }
    }

    /// Nil when none was given, and in a read once its owner's personal data is erased.
    public var summary: String?
    public var groups: [Group]

    public init(summary: String? = nil, groups: [Group]) {
        self.summary = summary
        self.groups = groups
    }

    /// Identifiers of the selected options, by group identifier.
    public var selected: [String: [String]] {
        Dictionary(uniqueKeysWithValues: groups.map { ($0.identifier, $0.options.filter(\.selected).map(\.identifier)) })
    }
}

/// Highlight notice kinds and their triggers, as Apple names them.
public enum HighlightKind: String, Codable, Sendable, CaseIterable {
    case change, membership, mention, persistence

    public var triggers: [String] {
        switch self {
        case .change: ["edit", "comment"]
        case .membership: ["addedCollaborator", "removedCollaborator"]
        case .mention: []
        case .persistence: ["created", "moved", "renamed", "deleted"]
        }
    }
}

/// Any JSON value, to echo stored event data in history answers.
public enum JSONValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}
