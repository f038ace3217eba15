import Foundation

// The verifiable log's documents (SPEC "Verifiable log"), shared by the server, the SDK and
// `ledger audit verify`. Hashes are standard base64.

/// `GET /v1/log/proofs/inclusion`: the event at `position` is leaf `leafIndex` (position − 1)
/// of the tree of `treeSize` leaves; `hashes` is its RFC 9162 inclusion path.
public struct InclusionProof: Codable, Sendable, Equatable {
    public var position: Int64
    public var treeSize: Int64
    public var leafIndex: Int64
    public var leafHash: String
    public var hashes: [String]

    public init(position: Int64, treeSize: Int64, leafIndex: Int64, leafHash: String, hashes: [String]) {
        self.position = position
        self.treeSize = treeSize
        self.leafIndex = leafIndex
        self.leafHash = leafHash
        self.hashes = hashes
    }
}

/// `GET /v1/log/proofs/consistency`: the RFC 9162 proof that the tree of `from` leaves is a
/// prefix of the tree of `to` leaves.
public struct ConsistencyProof: Codable, Sendable, Equatable {
    public var from: Int64
    public var to: Int64
    public var hashes: [String]

    public init(from: Int64, to: Int64, hashes: [String]) {
        self.from = from
        self.to = to
        self.hashes = hashes
    }
}

/// `GET /v1/audit/evidence/{position}`: one event with everything needed to check offline
/// that it is in the log a signed checkpoint commits to.
public struct Evidence: Codable, Sendable, Equatable {
    /// The event as stored. `data` and `metadata` are the exact stored JSON text and
    /// `recordedAt` has microseconds, so its canonical bytes can be rebuilt byte for byte.
    public struct Event: Codable, Sendable, Equatable {
        public var position: Int64
        public var streamId: String
        public var version: Int64
        public var eventId: String
        public var type: String
        public var data: String
        public var metadata: String
        public var recordedAt: String

        public init(
            position: Int64, streamId: String, version: Int64, eventId: String, type: String, data: String, metadata: String,
            recordedAt: String
        ) {
            self.position = position
            self.streamId = streamId
            self.version = version
            self.eventId = eventId
            self.type = type
            self.data = data
            self.metadata = metadata
            self.recordedAt = recordedAt
        }
    }

    /// A committed value's opening (SPEC "Personal data and erasure"): the plaintext and the
    /// 32-byte opening (base64) that give `commitment` (`commitment:<base64 HMAC-SHA256(key:
    /// opening, message: value)>`), as the event holds it.
    public struct Opening: Codable, Sendable, Equatable {
        public var commitment: String
        public var value: String
        public var opening: String

        public init(commitment: String, value: String, opening: String) {
            self.commitment = commitment
            self.value = value
            self.opening = opening
        }
    }

    /// On shards: the event's shard checkpoint (`checkpoint`) as an entry of the top log, the
    /// deployment's origin, so the evidence leads from the event to one checkpoint auditors know.
    public struct TopLevel: Codable, Sendable, Equatable {
        /// The shard whose log holds the event.
        public var shard: Int
        /// The top log's entry: the `ShardCheckpointRecorded` event recording `checkpoint`.
        public var entry: Event
        /// The entry's canonical bytes (the top log's leaf), base64.
        public var leaf: String
        public var inclusion: InclusionProof
        /// The top log's signed checkpoint the inclusion proof leads to.
        public var checkpoint: String

        public init(shard: Int, entry: Event, leaf: String, inclusion: InclusionProof, checkpoint: String) {
            (self.shard, self.entry, self.leaf, self.inclusion, self.checkpoint) = (shard, entry, leaf, inclusion, checkpoint)
        }
    }

    public var event: Event
    /// The event's canonical bytes (the leaf data), base64.
    public var leaf: String
    public var inclusion: InclusionProof
    /// The signed checkpoint the inclusion proof leads to.
    public var checkpoint: String
    /// The openings of the event's commitments not erased (none for an event with none; absent in
    /// evidence from before commitments).
    public var openings: [Opening]?
    /// Pseudonym → account, for the event's pseudonyms whose subjects are not erased (absent in
    /// evidence from before pseudonyms).
    public var accounts: [String: String]?
    /// On shards: `checkpoint` in the top log (absent on one database).
    public var top: TopLevel?

    public init(
        event: Event, leaf: String, inclusion: InclusionProof, checkpoint: String, openings: [Opening]? = nil,
        accounts: [String: String]? = nil
    ) {
        self.event = event
        self.leaf = leaf
        self.inclusion = inclusion
        self.checkpoint = checkpoint
        self.openings = openings
        self.accounts = accounts
    }
}
