import Foundation

// The bodies the console reads besides the others (issue 31): the list of collaborations and
// the log's health.

/// `GET /v1/collaborations?q=`: the collaborations the caller may see, newest first, a page at a time.
public struct CollaborationList: Codable, Sendable, Hashable {
    public struct Entry: Codable, Sendable, Hashable {
        public var collaborationId: String
        /// Null, as the title, once the owner's personal data is erased.
        public var localIdentifier: String?
        public var title: String?
        public var owner: String
        public var startedAt: Date
        public var memberCounts: Collaboration.MemberCounts
        /// On shards, the shard that holds it (absent on one database).
        public var shard: Int?

        public init(
            collaborationId: String, localIdentifier: String?, title: String?, owner: String, startedAt: Date,
            memberCounts: Collaboration.MemberCounts
        ) {
            self.collaborationId = collaborationId
            self.localIdentifier = localIdentifier
            self.title = title
            self.owner = owner
            self.startedAt = startedAt
            self.memberCounts = memberCounts
        }

        /// An erased local identifier or title is written as null, not left out.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(collaborationId, forKey: .collaborationId)
            try c.encode(localIdentifier, forKey: .localIdentifier)
            try c.encode(title, forKey: .title)
            try c.encode(owner, forKey: .owner)
            try c.encode(startedAt, forKey: .startedAt)
            try c.encode(memberCounts, forKey: .memberCounts)
            try c.encodeIfPresent(shard, forKey: .shard)
        }
    }
    public var collaborations: [Entry]
    public var nextCursor: String?
    /// The log position the views reflect; absent on shards, where a position is one shard's.
    public var position: Int64?

    public init(collaborations: [Entry], nextCursor: String?, position: Int64?) {
        self.collaborations = collaborations
        self.nextCursor = nextCursor
        self.position = position
    }
}

/// `GET /v1/log/status`: how far the log, its published checkpoint and the views are.
public struct LogStatus: Codable, Sendable, Hashable {
    public struct PublishedCheckpoint: Codable, Sendable, Hashable {
        public var size: Int64
        public var rootHash: String
        public var signedAt: Date
        public var publishedAt: Date
        /// The names of the other keys that signed the published note (the witnesses).
        public var cosigners: [String]

        public init(size: Int64, rootHash: String, signedAt: Date, publishedAt: Date, cosigners: [String]) {
            self.size = size
            self.rootHash = rootHash
            self.signedAt = signedAt
            self.publishedAt = publishedAt
            self.cosigners = cosigners
        }
    }
    public struct Projection: Codable, Sendable, Hashable {
        public var name: String
        public var position: Int64
        public var lagEvents: Int64
        public var lagSeconds: Double
        public var status: String
        /// On shards, the shard it runs on (absent on one database).
        public var shard: Int?

        public init(name: String, position: Int64, lagEvents: Int64, lagSeconds: Double, status: String) {
            self.name = name
            self.position = position
            self.lagEvents = lagEvents
            self.lagSeconds = lagSeconds
            self.status = status
        }
    }
    /// The expiry service (SPEC "Time-bound access").
    public struct Expiry: Codable, Sendable, Hashable {
        /// The session holding the expiry lease (an advisory lock any login could take), as
        /// PostgreSQL shows it, against what the expiry service recorded when it took the lease.
        public struct Holder: Codable, Sendable, Hashable {
            public var applicationName: String
            public var pid: Int
            /// Whether it is the expiry service that recorded itself: false for any other session
            /// sitting on the lock (then nothing expires while it holds it).
            public var recognised: Bool
            /// When the expiry service took the lease, and when it last made a round (at least
            /// every 10 s); nil unless recognised.
            public var since: Date?
            public var progressAt: Date?

            public init(applicationName: String, pid: Int, recognised: Bool, since: Date?, progressAt: Date?) {
                (self.applicationName, self.pid, self.recognised, self.since, self.progressAt) = (
                    applicationName, pid, recognised, since, progressAt
                )
            }
        }
        /// Whether the expiry service holds its lease and is making progress (a round in the last
        /// 30 s); false while the lease is free, or held by a session that is not the service.
        public var running: Bool
        /// The earliest `notAfter` of a window not yet expired (null: none).
        public var nextDueAt: Date?
        /// Windows more than a second past their `notAfter` without their `AccessExpired`.
        public var overdue: Int64
        /// Who holds the lease (absent: no one, or a server from before this field).
        public var holder: Holder?

        public init(running: Bool, nextDueAt: Date?, overdue: Int64, holder: Holder? = nil) {
            self.running = running
            self.nextDueAt = nextDueAt
            self.overdue = overdue
            self.holder = holder
        }

        /// `nextDueAt` is written as null, not left out.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(running, forKey: .running)
            try c.encode(nextDueAt, forKey: .nextDueAt)
            try c.encode(overdue, forKey: .overdue)
            try c.encodeIfPresent(holder, forKey: .holder)
        }
    }
    /// The stored tree against the log (SPEC "Never sign over a rewritten log").
    public struct Tree: Codable, Sendable, Hashable {
        /// The events the stored tree was built over (0: none recorded yet).
        public var size: Int64
        /// `intact`; `cut` (the log ends before `size`: events were removed) or `rewritten` (an
        /// event at or below `size` was replaced): the checkpointer refuses to sign until an
        /// operator puts the events back; `unrecorded` (size 0): no edge recorded yet (a tree
        /// from before it, checked and recorded when the checkpointer next starts).
        public var state: String

        public init(size: Int64, state: String) {
            self.size = size
            self.state = state
        }
    }
    public var head: Int64
    public var checkpoint: PublishedCheckpoint?
    /// Events past the published checkpoint, and the age of the oldest of them. Negative when the
    /// log is shorter than its published checkpoint (cut).
    public var checkpointLagEvents: Int64
    public var checkpointLagSeconds: Double
    public var projections: [Projection]
    public var expiry: Expiry
    /// Absent from servers before it.
    public var tree: Tree?
    /// On shards: this status's shard, in each of `shards` (absent on one database and on the whole).
    public var shard: Int?
    /// On shards: each shard's own status (`LogStatus.sharded`); absent on one database.
    public var shards: [LogStatus]?

    public init(
        head: Int64, checkpoint: PublishedCheckpoint?, checkpointLagEvents: Int64, checkpointLagSeconds: Double, projections: [Projection],
        expiry: Expiry, tree: Tree? = nil
    ) {
        self.head = head
        self.checkpoint = checkpoint
        self.checkpointLagEvents = checkpointLagEvents
        self.checkpointLagSeconds = checkpointLagSeconds
        self.projections = projections
        self.expiry = expiry
        self.tree = tree
    }
}
