import Foundation

// The bodies of the webhook endpoints (openapi.yaml), defined once for the server and the SDK.

/// `POST /v1/webhooks`: where to deliver, and which collaboration (all the caller owns if absent).
public struct WebhookRequest: Codable, Sendable, Hashable {
    public var url: String
    public var collaborationId: String?

    public init(url: String, collaborationId: String? = nil) {
        self.url = url
        self.collaborationId = collaborationId
    }
}

/// A registered webhook and how its deliveries go.
public struct Webhook: Codable, Sendable, Hashable {
    public var id: String
    public var url: String
    /// Absent: every collaboration the owner owns, including those started later.
    public var collaborationId: String?
    public var createdAt: Date
    /// Every event of the webhook at or below this log position has been delivered.
    public var deliveredThrough: Int64
    /// `active`, `failing` (retrying with backoff) or `disabled` (after a day of failures).
    public var status: String
    public var failingSince: Date?
    public var lastError: String?
    public var nextAttemptAt: Date?
    public var disabledAt: Date?
    /// The signing secret: only in the answer to the registration, never again.
    public var secret: String?
    /// On shards: the shard that delivers it (its events; `deliveredThrough` is its position).
    /// A webhook of every collaboration its owner owns is on every shard, listed once for each.
    public var shard: Int?

    public init(
        id: String, url: String, collaborationId: String?, createdAt: Date, deliveredThrough: Int64, status: String,
        failingSince: Date? = nil, lastError: String? = nil, nextAttemptAt: Date? = nil, disabledAt: Date? = nil,
        secret: String? = nil
    ) {
        self.id = id
        self.url = url
        self.collaborationId = collaborationId
        self.createdAt = createdAt
        self.deliveredThrough = deliveredThrough
        self.status = status
        self.failingSince = failingSince
        self.lastError = lastError
        self.nextAttemptAt = nextAttemptAt
        self.disabledAt = disabledAt
        self.secret = secret
    }
}

/// `GET /v1/webhooks`: the caller's webhooks, oldest first.
public struct Webhooks: Codable, Sendable, Hashable {
    public var webhooks: [Webhook]

    public init(webhooks: [Webhook]) { self.webhooks = webhooks }
}
