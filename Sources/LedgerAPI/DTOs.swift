import Foundation
import Hummingbird
import LedgerDomain
import LedgerWire

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
