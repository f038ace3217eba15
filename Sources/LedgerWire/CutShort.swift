import Foundation

/// The answer to a write of every shard cut short (docs/SCALING.md, "What a fan-out cut short
/// answers"): an erasure, a webhook of every collaboration registered or deleted, or an export,
/// that some shards did and others did not (a shard unavailable, or failing or refusing midway).
/// It is the catalogue's error, `{"error": {code, message}}` (503 `cut_short` with `Retry-After`,
/// or a shard's own refusal), with `shards`: what each shard did, in the shards' order, so an
/// operator or a retry knows what happened.
public struct CutShort: Codable, Sendable, Hashable {
    /// One shard's part. `completed` says whether the shard did it; if so, what it answered
    /// (below), else `error`: the shard's own refusal, or why it was not asked.
    public struct Part: Sendable, Hashable {
        public var shard: Int
        public var completed: Bool
        /// An erasure the shard did: its own answer, its fields beside `shard` as in the answer
        /// of every shard (`erasedAt`, `position` (the shard's), `values`, `unerasedPositions`;
        /// or `held: false`).
        public var erasure: Erasure?
        /// A webhook deletion the shard did: whether it held the webhook (204) or not (404).
        public var deleted: Bool?
        /// A webhook registration the shard did: the webhook's id (on every shard the same).
        public var webhook: String?
        /// A registration of every shard is on all of them or none: whether it was deleted again
        /// from this shard (false: it may be left there, for the caller to delete).
        public var undone: Bool?
        /// Why the shard did not do its part: its refusal, or why it was not asked.
        public var error: ErrorBody.Detail?

        public init(
            shard: Int, completed: Bool, erasure: Erasure? = nil, deleted: Bool? = nil, webhook: String? = nil, undone: Bool? = nil,
            error: ErrorBody.Detail? = nil
        ) {
            (self.shard, self.completed, self.erasure, self.deleted) = (shard, completed, erasure, deleted)
            (self.webhook, self.undone, self.error) = (webhook, undone, error)
        }
    }

    public var error: ErrorBody.Detail
    public var shards: [Part]

    public init(error: ErrorBody.Detail, shards: [Part]) {
        self.error = error
        self.shards = shards
    }
}

extension CutShort.Part: Codable {
    enum CodingKeys: String, CodingKey { case shard, completed, deleted, webhook, undone, error }
    /// The keys of an erasure's answer, which mark a part that holds one.
    enum ErasureKeys: String, CodingKey { case held, position }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        shard = try c.decode(Int.self, forKey: .shard)
        completed = try c.decode(Bool.self, forKey: .completed)
        deleted = try c.decodeIfPresent(Bool.self, forKey: .deleted)
        webhook = try c.decodeIfPresent(String.self, forKey: .webhook)
        undone = try c.decodeIfPresent(Bool.self, forKey: .undone)
        error = try c.decodeIfPresent(ErrorBody.Detail.self, forKey: .error)
        let erasureKeys = try decoder.container(keyedBy: ErasureKeys.self)
        if completed && (erasureKeys.contains(.held) || erasureKeys.contains(.position)) {
            erasure = try Erasure(from: decoder)
            erasure?.shard = nil
        }
    }

    /// The erasure's fields beside the part's own, as one object.
    public func encode(to encoder: any Encoder) throws {
        if var erasure {
            erasure.shard = nil
            try erasure.encode(to: encoder)
        }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(shard, forKey: .shard)
        try c.encode(completed, forKey: .completed)
        try c.encodeIfPresent(deleted, forKey: .deleted)
        try c.encodeIfPresent(webhook, forKey: .webhook)
        try c.encodeIfPresent(undone, forKey: .undone)
        try c.encodeIfPresent(error, forKey: .error)
    }
}
