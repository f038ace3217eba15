import Foundation
import Hummingbird
import LedgerDomain

// Request and response bodies of the v1 API (see openapi.yaml).

struct StartRequest: Decodable {
    var localIdentifier: String
    var title: String
    var initiatorHandle: String
    var initiatorName: String?
    var shareOptions: ShareOptions?
}

public struct StartResponse: ResponseCodable, Equatable {
    public var collaborationId: String
    public var universalLink: String
    public var position: Int64
}

struct ParticipantsRequest: Decodable {
    var added: [String]?
    var removed: [String]?
}

public struct ParticipantsResponse: ResponseCodable, Equatable {
    public var added: [String]
    public var removed: [String]
    public var revokedAccounts: [String]
    public var position: Int64
}

struct HighlightRequest: Decodable {
    var kind: String
    var trigger: String?
    var mentionedRootHash: String?
}

public struct PositionResponse: ResponseCodable, Equatable {
    public var position: Int64
}

public struct CollaborationView: ResponseCodable, Equatable, Sendable {
    public var collaborationId: String
    public var localIdentifier: String
    public var title: String
    public var initiatorHandle: String
    public var initiatorName: String?
    public var owner: String
    public var universalLink: String
    public var shareOptions: ShareOptions?
    /// Selected option identifiers by group identifier.
    public var selectedOptions: [String: [String]]
    public var memberCounts: MemberCounts
    public var startedAt: Date
    public var position: Int64
}

public struct MemberCounts: Codable, Sendable, Equatable {
    public var invited: Int
    public var granted: Int
    public var removed: Int
}

public struct Member: Codable, Sendable, Equatable {
    public var rootHash: String
    public var state: String
    public var accountId: String?
    public var invitedAt: Date?
    public var grantedAt: Date?
}

public struct MembersView: ResponseCodable, Equatable, Sendable {
    public var collaborationId: String
    public var owner: String
    public var position: Int64
    public var members: [Member]
}

public struct HistoryEntry: Codable, Sendable, Equatable {
    public var position: Int64
    public var version: Int64
    public var type: String
    public var time: Date
    public var actor: String?
    public var data: JSONValue
}

public struct HistoryView: ResponseCodable, Equatable, Sendable {
    public var collaborationId: String
    public var events: [HistoryEntry]
}

public struct Notice: Codable, Sendable, Equatable {
    public var position: Int64
    public var kind: String
    public var trigger: String?
    public var mentionedRootHash: String?
    public var accountId: String
    public var time: Date
}

public struct HighlightsView: ResponseCodable, Equatable, Sendable {
    public var collaborationId: String
    public var highlights: [Notice]
}

public struct MyCollaboration: Codable, Sendable, Equatable {
    public var collaborationId: String
    public var title: String
    public var role: String
}

public struct MyCollaborationsView: ResponseCodable, Equatable, Sendable {
    public var accountId: String
    public var collaborations: [MyCollaboration]
}

public struct AccessRecord: Codable, Sendable, Equatable {
    public var position: Int64
    public var time: Date
    public var collaborationId: String
    public var accountId: String
    public var rootHash: String
    public var change: String
    public var reason: String?
    public var actor: String?
}

public struct AccessAuditView: ResponseCodable, Equatable, Sendable {
    public var records: [AccessRecord]
}

/// Any JSON value, to echo stored event data in history answers.
public enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
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
