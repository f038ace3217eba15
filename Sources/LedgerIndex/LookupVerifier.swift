import LedgerDomain
import LedgerWire
import TransparencyLog

/// Checks a lookup answer (`IndexLookup`) offline, trusting nothing but the log's verifier key
/// (docs/TRUST.md, "The verifiable index", "Lookups"). One chain, each link refused by name:
/// 1. the checkpoint is signed with `key`; on shards (`top`), `key` is the deployment's: the top
///    log's checkpoint is signed with it, its entry records shard k's checkpoint, and that is the
///    answer's, signed with the same key under shard k's origin (as an event's evidence);
/// 2. the revision record is the leaf of an `IndexRevisionRecorded` event of `ledger-index`,
///    written exactly as specified, included under the checkpoint, at a position past its size;
/// 3. the key is the one asked, and the listing verifies under the record's revision
///    (`KeyListing.verify`): the proof, rising positions, leaves naming the key, the chain;
/// 4. each listed leaf is included under the checkpoint at its position;
/// 5. `revision` and `positions` are what the record and the listing say;
/// 6. with `through`, the revision covers that position (a members-at-P answer from an older
///    revision could miss an event between the two);
/// 7. with `at` (a time, microseconds since the epoch), the answer's `firstAfter` is a leaf
///    included under the checkpoint and recorded after it, at or past `timesRiseFrom` (the first
///    position from which the log's times rise, as `ledger index verify` finds it: 1 for a log
///    begun with migration 0037), the revision covers every position before that leaf, and
///    every listed event before it was recorded at or before `at` (after it, after): times rise
///    along the log, so those are every event of the key up to `at`;
/// 8. on shards, the partition map the top entry names (`map`, a `ShardMapRecorded` of the top
///    log) is included under the top log's checkpoint and, for a collaboration, gives it the
///    answer's shard: another shard's answer (an honest absence there) is refused; with `shard`,
///    the answer must also be that shard's.
public enum LookupVerifier {
    public struct Report: Sendable, Equatable {
        public var key: IndexKey
        public var positions: [Int64]
        /// The revision's size: the answer is complete over positions 1 … this.
        public var revisionSize: Int64
        public var recordPosition: Int64
        public var treeSize: Int64
        /// On shards: the shard whose log and index the answer is of, and the top log's size.
        public var shard: Int?
        public var topTreeSize: Int64?
        /// With `at`: the last position recorded at or before it (0: none), every listed one up
        /// to it an event of the key recorded by then.
        public var recordedThrough: Int64?
    }

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The key an answer names; refused unless exactly one of the two is given, an identity as
    /// the canonical base64 of 32 bytes.
    public static func key(of lookup: IndexLookup) throws(Failure) -> IndexKey {
        switch (lookup.collaboration, lookup.identity) {
        case (let id?, nil): return .collaboration(id)
        case (nil, let text?):
            guard let identity = IndexKey.identity(base64: text) else {
                throw Failure(description: "key: identity \(text) is not the standard base64 of a 32-byte root hash")
            }
            return identity
        default: throw Failure(description: "key: an answer names one collaboration or one identity")
        }
    }

    /// `asked` is the key the caller asked about, never only the one the answer names: an honest
    /// answer for a look-alike key (another collaboration, an id in another Unicode form) would
    /// otherwise pass as the asked key's.
    public static func verify(
        _ lookup: IndexLookup, key verifier: NoteVerifier, asked: IndexKey, through: Int64? = nil, at: Int64? = nil,
        shard: Int? = nil, timesRiseFrom: Int64 = 1
    ) throws(Failure) -> Report {
        try verify(lookup, key: verifier, asked: asked, through: through, at: at, shard: shard, timesRiseFrom: timesRiseFrom, part: false)
    }

    /// `part`: one shard's answer within an identity's answer across shards.
    static func verify(
        _ lookup: IndexLookup, key verifier: NoteVerifier, asked: IndexKey, through: Int64?, at: Int64?, shard: Int?,
        timesRiseFrom: Int64, part: Bool
    ) throws(Failure) -> Report {
        do {
            return try check(
                lookup, key: verifier, asked: asked, through: through, at: at, shard: shard, timesRiseFrom: timesRiseFrom, part: part)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    private static func check(
        _ lookup: IndexLookup, key verifier: NoteVerifier, asked: IndexKey, through: Int64?, at: Int64?, shard: Int?,
        timesRiseFrom: Int64, part: Bool
    ) throws -> Report {
        let (checkpoint, top) = try EvidenceVerifier.openCheckpoint(lookup.checkpoint, top: lookup.top, key: verifier, of: "answer")
        if let shard, top?.recorded.shard != shard {
            throw Failure(
                description: "shard: the answer is \(top.map { "shard \($0.recorded.shard)'s" } ?? "no shard's"), not shard \(shard)'s")
        }
        let key = try key(of: lookup)
        guard asked == key else { throw Failure(description: "key: the answer is for \(key), not \(asked)") }
        if let next = lookup.next {
            throw Failure(
                description:
                    "page: the answer is one page of the key's list, whose next begins after \(next): merge every page (LedgerClient.lookup does) and check them as one"
            )
        }
        if let recorded = top?.recorded {
            try checkMap(lookup, key: verifier, asked: asked, recorded: recorded)
            // One shard's answer for an identity is one shard's part: complete only with every
            // shard's (`verify(_ sharded:…)`).
            if case .identity = key, !part {
                throw Failure(
                    description:
                        "key: an identity's answer on shards is shard \(recorded.shard)'s alone; check the answer of every shard (ShardedIndexLookup)"
                )
            }
        }
        // The record.
        let recordLeaf = try leaf(lookup.record, what: "record")
        let recordPosition = lookup.record.inclusion.position
        try EvidenceVerifier.checkInclusion(lookup.record.inclusion, of: recordLeaf, at: recordPosition, in: checkpoint, what: "record")
        guard let event = EventLeaf.event(from: recordLeaf) else { throw Failure(description: "record: the leaf is not an event's") }
        guard event.position == recordPosition else {
            throw Failure(description: "record: the leaf holds position \(event.position), not \(recordPosition)")
        }
        let revision: IndexRevision
        do {
            revision = try IndexRevision(streamId: event.streamId, type: event.type, data: event.data)
        } catch {
            throw Failure(description: "record: \(error)")
        }
        guard revision.logSize < recordPosition else {
            throw Failure(description: "record: a revision of \(revision.logSize) recorded at position \(recordPosition), not after it")
        }
        guard lookup.revision == IndexLookup.Revision(logSize: revision.logSize, root: revision.root.base64) else {
            throw Failure(
                description: "revision: the answer says \(lookup.revision.logSize) events, the record it proves says \(revision.logSize)")
        }
        // The listing, and each listed leaf in the log.
        guard let proofBytes = Base64.decode(lookup.proof) else { throw Failure(description: "proof: not standard base64") }
        var listed: [KeyListing.Listed] = []
        for (offset, entry) in lookup.events.enumerated() {
            let bytes = try leaf(entry, what: "event \(offset + 1)")
            try EvidenceVerifier.checkInclusion(
                entry.inclusion, of: bytes, at: entry.inclusion.position, in: checkpoint, what: "event \(offset + 1)")
            listed.append(.init(position: entry.inclusion.position, leaf: bytes))
        }
        let positions: [Int64]
        do {
            positions = try KeyListing(revision: revision, proof: try PrefixProof(bytes: proofBytes), listed: listed).verify(key: key)
        } catch {
            throw Failure(description: "listing: \(error)")
        }
        guard lookup.positions == positions else {
            throw Failure(description: "positions: the answer says \(lookup.positions.count), the proof shows \(positions.count)")
        }
        if let through, revision.logSize < through {
            throw Failure(
                description: "revision: it covers positions 1 … \(revision.logSize), not \(through): an event after it would be missing")
        }
        let recordedThrough = try at.map {
            try bound(lookup, at: $0, in: checkpoint, revision: revision, listed: listed, timesRiseFrom: timesRiseFrom)
        }
        return Report(
            key: key, positions: positions, revisionSize: revision.logSize, recordPosition: recordPosition, treeSize: checkpoint.size,
            shard: top?.recorded.shard, topTreeSize: top?.treeSize, recordedThrough: recordedThrough)
    }

    /// Link 7: the last position recorded at or before `at`, proven by the first leaf recorded
    /// after it; the listed leaves (verified above) must agree that times rise.
    private static func bound(
        _ lookup: IndexLookup, at: Int64, in checkpoint: Checkpoint, revision: IndexRevision, listed: [KeyListing.Listed],
        timesRiseFrom: Int64
    ) throws -> Int64 {
        let time = RecordedTime.text(micros: at)
        guard let entry = lookup.firstAfter else {
            throw Failure(
                description:
                    "at: the log of \(checkpoint.size) events holds none recorded after \(time), so later events could still be recorded at or before it: ask again once the log has moved past it"
            )
        }
        let bytes = try leaf(entry, what: "first after")
        let boundary = entry.inclusion.position
        try EvidenceVerifier.checkInclusion(entry.inclusion, of: bytes, at: boundary, in: checkpoint, what: "first after")
        guard let event = EventLeaf.event(from: bytes), event.position == boundary else {
            throw Failure(description: "first after: the leaf at \(boundary) is not the event at that position")
        }
        guard event.recordedAtMicros > at else {
            throw Failure(
                description:
                    "first after: the leaf at \(boundary) was recorded at \(RecordedTime.text(micros: event.recordedAtMicros)), not after \(time)"
            )
        }
        guard boundary >= timesRiseFrom else {
            throw Failure(
                description:
                    "times: the first leaf recorded after \(time) is at \(boundary), before position \(timesRiseFrom) from which the log's times rise: earlier events may be out of their times' order"
            )
        }
        guard boundary - 1 <= revision.logSize else {
            throw Failure(
                description:
                    "revision: it covers positions 1 … \(revision.logSize), not the \(boundary - 1) recorded at or before \(time): an event between would be missing"
            )
        }
        for item in listed {
            guard let recorded = EventLeaf.event(from: item.leaf)?.recordedAtMicros else {
                throw Failure(description: "times: the leaf at \(item.position) is not an event's")
            }
            guard (item.position < boundary) == (recorded <= at) else {
                throw Failure(
                    description:
                        "times: the event at \(item.position) was recorded at \(RecordedTime.text(micros: recorded)), but the first recorded after \(time) is at \(boundary): times do not rise"
                )
            }
        }
        return boundary - 1
    }

    /// Link 8: the map the top entry names, included under the top log's checkpoint (verified
    /// already, by `openCheckpoint`), and for a collaboration the answer's shard by that map.
    private static func checkMap(_ lookup: IndexLookup, key: NoteVerifier, asked: IndexKey, recorded: ShardCheckpointRecorded) throws {
        guard let position = recorded.map else {
            throw Failure(
                description:
                    "map: the top log's entry for shard \(recorded.shard) names no partition map (it was recorded before maps were): ask again once the top log records the shard's checkpoint anew"
            )
        }
        guard let entry = lookup.map, let top = lookup.top else { throw Failure(description: "map: the answer carries no partition map") }
        guard entry.inclusion.position == position else {
            throw Failure(description: "map: the answer's is at position \(entry.inclusion.position), not \(position) the top entry names")
        }
        let bytes = try leaf(entry, what: "map")
        try EvidenceVerifier.checkInclusion(
            entry.inclusion, of: bytes, at: position, in: try Checkpoint.open(top.checkpoint, verifier: key), what: "map")
        guard let event = EventLeaf.event(from: bytes), event.position == position else {
            throw Failure(description: "map: the leaf at \(position) is not the event at that position")
        }
        let map: ShardMapRecorded
        do {
            map = try ShardMapRecorded.entry(type: event.type, streamId: event.streamId, data: event.data)
        } catch {
            throw Failure(description: "map: \(error)")
        }
        if case .collaboration(let id) = asked, map.shard(of: id) != recorded.shard {
            throw Failure(
                description:
                    "shard: the deployment's map (top log position \(position)) puts \(id) in partition \(ShardMapRecorded.partition(of: id, count: map.partitions.count)) on shard \(map.shard(of: id)), not shard \(recorded.shard) the answer is of"
            )
        }
    }

    private static func leaf(_ entry: IndexLookup.Entry, what: String) throws -> [UInt8] {
        guard let bytes = Base64.decode(entry.leaf) else { throw Failure(description: "\(what): the leaf is not standard base64") }
        return bytes
    }
}
