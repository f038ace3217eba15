/// `GET /v1/audit/lookup?collaboration=ID` or `?identity=ROOTHASH`: every event that names the key
/// among the log's first `revision.logSize`, and no other, with one chain of proof that a
/// stranger checks offline (docs/TRUST.md, "The verifiable index", "Lookups"): the signed
/// `checkpoint`; the revision `record` (an `IndexRevisionRecorded` event) included under it; the
/// key's `proof` (docs/TRUST.md's bytes, base64) under the record's root; and each listed event's
/// leaf included under the same checkpoint. On shards, `top` leads from the shard's checkpoint to
/// the top log's, as an event's evidence does. `positions` and `revision` say in plain figures what
/// the proof shows, and a verifier refuses them unless they are exactly that. With `at=T`,
/// `firstAfter` bounds the answer in time: times rise along the log, so the listed events
/// before it are every event of the key recorded at or before T.
public struct IndexLookup: Codable, Sendable, Equatable {
    /// A leaf of the log (base64 of its bytes, as the tiles serve it) and its inclusion proof
    /// under the answer's checkpoint.
    public struct Entry: Codable, Sendable, Equatable {
        public var leaf: String
        public var inclusion: InclusionProof

        public init(leaf: String, inclusion: InclusionProof) {
            (self.leaf, self.inclusion) = (leaf, inclusion)
        }
    }

    /// The revision the record holds: the index root over the log's positions 1 … `logSize`.
    public struct Revision: Codable, Sendable, Equatable {
        public var logSize: Int64
        public var root: String

        public init(logSize: Int64, root: String) {
            (self.logSize, self.root) = (logSize, root)
        }
    }

    /// The key asked: a collaboration id, or an identity's root hash (standard base64); one of the two.
    public var collaboration: String?
    public var identity: String?
    public var positions: [Int64]
    public var revision: Revision
    public var checkpoint: String
    public var record: Entry
    public var proof: String
    public var events: [Entry]
    /// With `at=T`: the log's first leaf recorded after T, included under the checkpoint;
    /// absent when the checkpoint holds none (the log has recorded nothing after T yet).
    public var firstAfter: Entry?
    /// On shards: `checkpoint` (the shard's) as an entry of the top log, as in an event's
    /// evidence (absent on one database).
    public var top: Evidence.TopLevel?
    /// On shards: the partition map `top`'s entry names (a `ShardMapRecorded` event of the top
    /// log), included under the top log's checkpoint, which proves the answer's shard is the one
    /// the map gives the collaboration.
    public var map: Entry?
    /// A page of a key named by more events than one answer lists: the answer holds the positions
    /// after the `after` asked, and `next` is the `after` of the next page, asked under the same
    /// checkpoint (`size`). The pages merged (events and positions in order, `next` dropped)
    /// verify as one answer; one page alone does not.
    public var next: Int64?

    public init(
        collaboration: String?, identity: String?, positions: [Int64], revision: Revision, checkpoint: String, record: Entry,
        proof: String, events: [Entry], firstAfter: Entry? = nil, top: Evidence.TopLevel? = nil, map: Entry? = nil,
        next: Int64? = nil
    ) {
        (self.collaboration, self.identity, self.positions, self.revision) = (collaboration, identity, positions, revision)
        (self.checkpoint, self.record, self.proof, self.events, self.top) = (checkpoint, record, proof, events, top)
        (self.firstAfter, self.map, self.next) = (firstAfter, map, next)
    }
}
