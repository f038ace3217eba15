import Foundation

// The bodies of the v1 reads (openapi.yaml), defined once for the server, the SDK and the
// tests. Root hashes are standard base64 strings; dates RFC 3339.

/// `GET /v1/collaborations/{id}`.
public struct Collaboration: Codable, Sendable, Hashable {
    /// Identities by state, as of now: an invited or granted identity whose window has ended
    /// counts as expired, whether or not its `AccessExpired` is in the log yet; a granted one
    /// whose window has not started yet counts as scheduled (not granted).
    public struct MemberCounts: Codable, Sendable, Hashable {
        public var invited: Int
        public var granted: Int
        public var removed: Int
        public var expired: Int
        public var scheduled: Int

        public init(invited: Int, granted: Int, removed: Int, expired: Int, scheduled: Int = 0) {
            self.invited = invited
            self.granted = granted
            self.removed = removed
            self.expired = expired
            self.scheduled = scheduled
        }

        /// A server from before scheduled windows sends no `scheduled`: none.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            (invited, granted, removed) = try (
                c.decode(Int.self, forKey: .invited), c.decode(Int.self, forKey: .granted), c.decode(Int.self, forKey: .removed)
            )
            expired = try c.decode(Int.self, forKey: .expired)
            scheduled = try c.decodeIfPresent(Int.self, forKey: .scheduled) ?? 0
        }
    }
    public var collaborationId: String
    /// Personal values (the local identifier, the title, the initiator's handle and name, and the
    /// share options' summary and titles): null once their subject is erased. The owner is then
    /// `erased:<pseudonym>`.
    public var localIdentifier: String?
    public var title: String?
    public var initiatorHandle: String?
    public var initiatorName: String?
    public var owner: String
    public var universalLink: String
    public var shareOptions: ShareOptions?
    /// Selected option identifiers by group identifier.
    public var selectedOptions: [String: [String]]
    public var memberCounts: MemberCounts
    public var startedAt: Date
    public var position: Int64

    public init(
        collaborationId: String, localIdentifier: String?, title: String?, initiatorHandle: String?, initiatorName: String?, owner: String,
        universalLink: String, shareOptions: ShareOptions?, selectedOptions: [String: [String]], memberCounts: MemberCounts,
        startedAt: Date, position: Int64
    ) {
        self.collaborationId = collaborationId
        self.localIdentifier = localIdentifier
        self.title = title
        self.initiatorHandle = initiatorHandle
        self.initiatorName = initiatorName
        self.owner = owner
        self.universalLink = universalLink
        self.shareOptions = shareOptions
        self.selectedOptions = selectedOptions
        self.memberCounts = memberCounts
        self.startedAt = startedAt
        self.position = position
    }
}

extension Collaboration {
    /// An erased value is written as null, not left out.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(collaborationId, forKey: .collaborationId)
        try c.encode(localIdentifier, forKey: .localIdentifier)
        try c.encode(title, forKey: .title)
        try c.encode(initiatorHandle, forKey: .initiatorHandle)
        try c.encode(initiatorName, forKey: .initiatorName)
        try c.encode(owner, forKey: .owner)
        try c.encode(universalLink, forKey: .universalLink)
        try c.encodeIfPresent(shareOptions, forKey: .shareOptions)
        try c.encode(selectedOptions, forKey: .selectedOptions)
        try c.encode(memberCounts, forKey: .memberCounts)
        try c.encode(startedAt, forKey: .startedAt)
        try c.encode(position, forKey: .position)
    }
}

/// `GET /v1/collaborations/{id}/members`, current or as of a time or position.
public struct Members: Codable, Sendable, Hashable {
    public struct Member: Codable, Sendable, Hashable {
        /// Base64 of the identity's root hash; `rootHashData` for the bytes.
        public var rootHash: String
        /// `invited`, `granted`, `scheduled` or `expired` (removed identities are not listed).
        /// Time-correct: read now or `asOf`, an invited or granted identity whose window had ended
        /// by then is `expired`, even before its `AccessExpired` is in the log, and a granted one
        /// whose window had not started yet is `scheduled` (it gives nothing until `notBefore`);
        /// `atPosition`, by the events.
        public var state: String
        /// The account that holds (or, expired, held) access through the identity.
        public var accountId: String?
        public var invitedAt: Date?
        public var grantedAt: Date?
        /// The identity's access window (absent bounds: none): it may prove access from
        /// `notBefore` until `notAfter`.
        public var notBefore: Date?
        public var notAfter: Date?

        public var rootHashData: Data? { Data(base64Encoded: rootHash) }

        public init(
            rootHash: String, state: String, accountId: String? = nil, invitedAt: Date? = nil, grantedAt: Date? = nil,
            notBefore: Date? = nil, notAfter: Date? = nil
        ) {
            self.rootHash = rootHash
            self.state = state
            self.accountId = accountId
            self.invitedAt = invitedAt
            self.grantedAt = grantedAt
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
    }
    public var collaborationId: String
    public var owner: String
    /// The log position the members stand at (every page of a walk reads at the first's).
    public var position: Int64
    /// In root hash order.
    public var members: [Member]
    /// The next page's `cursor`; absent on the last page.
    public var nextCursor: String?

    public init(collaborationId: String, owner: String, position: Int64, members: [Member], nextCursor: String? = nil) {
        self.collaborationId = collaborationId
        self.owner = owner
        self.position = position
        self.members = members
        self.nextCursor = nextCursor
    }
}

/// `GET /v1/collaborations/{id}/history`: the collaboration's events in log order.
public struct History: Codable, Sendable, Hashable {
    /// An event as the history endpoint, the change feed and webhook deliveries show it.
    public struct Entry: Codable, Sendable, Hashable {
        public var position: Int64
        /// The collaboration the event belongs to.
        public var collaborationId: String
        public var version: Int64
        public var type: String
        public var time: Date
        public var actor: String?
        public var data: JSONValue
        /// On the change feed of a ledger on shards: the shard whose log `position` is in.
        public var shard: Int?

        public init(
            position: Int64, collaborationId: String, version: Int64, type: String, time: Date, actor: String?, data: JSONValue,
            shard: Int? = nil
        ) {
            self.shard = shard
            self.position = position
            self.collaborationId = collaborationId
            self.version = version
            self.type = type
            self.time = time
            self.actor = actor
            self.data = data
        }
    }
    public var collaborationId: String
    public var events: [Entry]
    /// The next page's `cursor`; absent on the last page.
    public var nextCursor: String?

    public init(collaborationId: String, events: [Entry], nextCursor: String? = nil) {
        self.collaborationId = collaborationId
        self.events = events
        self.nextCursor = nextCursor
    }
}

/// `GET /v1/collaborations/{id}/highlights`: the notices the caller may see.
public struct Highlights: Codable, Sendable, Hashable {
    public struct Notice: Codable, Sendable, Hashable {
        public var position: Int64
        public var kind: String
        public var trigger: String?
        public var mentionedRootHash: String?
        public var accountId: String
        public var time: Date

        public init(position: Int64, kind: String, trigger: String?, mentionedRootHash: String?, accountId: String, time: Date) {
            self.position = position
            self.kind = kind
            self.trigger = trigger
            self.mentionedRootHash = mentionedRootHash
            self.accountId = accountId
            self.time = time
        }
    }
    public var collaborationId: String
    public var highlights: [Notice]
    /// The next page's `cursor`; absent on the last page.
    public var nextCursor: String?

    public init(collaborationId: String, highlights: [Notice], nextCursor: String? = nil) {
        self.collaborationId = collaborationId
        self.highlights = highlights
        self.nextCursor = nextCursor
    }
}

/// `GET /v1/accounts/me/collaborations`.
public struct MyCollaborations: Codable, Sendable, Hashable {
    public struct Entry: Codable, Sendable, Hashable {
        public var collaborationId: String
        /// Null once the owner's personal data is erased.
        public var title: String?
        /// `owner` or `participant`.
        public var role: String

        /// An erased title is written as null, not left out.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(collaborationId, forKey: .collaborationId)
            try c.encode(title, forKey: .title)
            try c.encode(role, forKey: .role)
        }

        public init(collaborationId: String, title: String?, role: String) {
            self.collaborationId = collaborationId
            self.title = title
            self.role = role
        }
    }
    public var accountId: String
    public var collaborations: [Entry]

    public init(accountId: String, collaborations: [Entry]) {
        self.accountId = accountId
        self.collaborations = collaborations
    }
}

/// `GET /v1/audit/access`: who gained and lost access when.
public struct AccessAudit: Codable, Sendable, Hashable {
    public struct Record: Codable, Sendable, Hashable {
        public var position: Int64
        public var time: Date
        public var collaborationId: String
        public var accountId: String
        public var rootHash: String
        /// `granted`, `revoked` or `expired` (the identity's window ended: access lost at `dueAt`).
        public var change: String
        public var reason: String?
        public var actor: String?
        /// An expiry's `dueAt`: the end of the window (`time` is when the expiry was recorded,
        /// at or after it).
        public var dueAt: Date?
        /// On shards: the shard whose log `position` is in (absent on a single database).
        public var shard: Int?

        public init(
            position: Int64, time: Date, collaborationId: String, accountId: String, rootHash: String, change: String, reason: String?,
            actor: String?, dueAt: Date? = nil, shard: Int? = nil
        ) {
            self.position = position
            self.time = time
            self.collaborationId = collaborationId
            self.accountId = accountId
            self.rootHash = rootHash
            self.change = change
            self.reason = reason
            self.actor = actor
            self.dueAt = dueAt
            self.shard = shard
        }
    }
    public var records: [Record]
    /// The next page's `cursor`; absent on the last page.
    public var nextCursor: String?

    public init(records: [Record], nextCursor: String? = nil) {
        self.records = records
        self.nextCursor = nextCursor
    }
}
