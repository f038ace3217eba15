import Foundation
import LedgerDomain
import LedgerIndex
import LedgerWire
import TransparencyLog

/// What `verifyIndex` checked: the published tree whose leaves it read, and every index revision
/// recorded among them, each equal to the index rebuilt from the leaves it covers.
public struct VerifiedIndex: Sendable, Equatable {
    public var checkpoint: VerifiedCheckpoint
    public var revisions: [IndexRevision]
    /// The first position from which the leaves' times never fall (1 when none does): an answer
    /// bounded at a time (`firstAfter`) is complete when its bound is at or past it. Logs older
    /// than the rule (migration 0037) may fall before it, by an append's duration.
    public var timesRiseFrom: Int64
}

extension LedgerClient {
    /// Collaboration `id`'s members as the events recorded at or before `time` left them, checked
    /// offline against `key` (`VerifiedMembers.fold(_:key:collaboration:recordedBy:)`): nothing is
    /// taken from the ledger's views. Read each identity as of `time` with
    /// `VerifiedMembers.status(_:at:)`. Throws `LookupVerifier.Failure` naming the link that does
    /// not hold, among them a log that has recorded nothing after `time` yet.
    public func verifiedMembers(
        collaboration id: String, key: NoteVerifier, at time: Date
    ) async throws -> (report: LookupVerifier.Report, state: CollaborationState?) {
        let lookup = try await lookup(collaboration: id, at: time)
        return try VerifiedMembers.fold(lookup, key: key, collaboration: id, recordedBy: RFC3339.micros(time))
    }

    /// From the public tiles alone (docs/TRUST.md, "The verifiable index"): every leaf of the
    /// published tree (its entry bundles, which need an auditor's token unless the log serves
    /// them publicly), checked against the checkpoint's root; then the index rebuilt from those
    /// leaves in memory (`LogIndex`, the map function of TRUST.md) and every
    /// `IndexRevisionRecorded` among them compared with the index of the leaves it names, and the
    /// leaves' times read for where they stop falling (`timesRiseFrom`). Throws
    /// `LogAuditFailure` naming the first that does not hold. Reads the bundles twice (the
    /// records first, then the fold up to each), so it holds the index, never the leaves.
    public func verifyIndex(key: NoteVerifier, policy: WitnessPolicy? = nil, publicEntries: Bool = false) async throws -> VerifiedIndex {
        let published = try await publishedCheckpoint(key: key, policy: policy)
        let size = published.checkpoint.size
        var records: [IndexRevision] = []
        var frontier = MerkleFrontier()
        var (timesRiseFrom, lastTime) = (Int64(1), Int64.min)
        try await forEachEntry(size: size, publicEntries: publicEntries) { position, leaf in
            _ = frontier.append(leafHash: MerkleTree.leafHash(leaf))
            // Every leaf of this log is an event's (a leaf that is not yields no time to check).
            guard let event = EventLeaf.event(from: leaf) else { return }
            if event.recordedAtMicros < lastTime { timesRiseFrom = position }
            lastTime = event.recordedAtMicros
            guard event.streamId.utf8.elementsEqual(IndexRevision.stream.utf8) else { return }
            let revision: IndexRevision
            do {
                revision = try IndexRevision(streamId: event.streamId, type: event.type, data: event.data)
            } catch {
                throw LogAuditFailure("the index revision record at position \(position) is not written as specified: \(error)")
            }
            guard (revision.logSize < position) && (revision.logSize > (records.last?.logSize ?? -1)) else {
                throw LogAuditFailure(
                    "the record at position \(position) names \(revision.logSize) events: not below its own position, or not above the record before"
                )
            }
            records.append(revision)
        }
        guard frontier.root == published.checkpoint.rootHash else {
            throw LogAuditFailure("the entry bundles do not give the published checkpoint's root")
        }
        let index = LogIndex(store: MemoryNodeStore())
        var (folded, buffer, pending) = (Int64(0), [[UInt8]](), records[...])
        try await forEachEntry(size: size, publicEntries: publicEntries) { _, leaf in
            buffer.append(leaf)
            // Each record's size reached: the index there, compared; then on.
            while let next = pending.first, next.logSize <= folded + Int64(buffer.count) {
                let take = Int(next.logSize - folded)
                let root = try await index.append(buffer.prefix(take), from: folded + 1)
                guard root == next.root else {
                    throw LogAuditFailure(
                        "the index of the first \(next.logSize) leaves has the root \(root.base64), not the \(next.root.base64) recorded")
                }
                buffer.removeFirst(take)
                (folded, _) = (next.logSize, pending.removeFirst())
            }
            if buffer.count >= 4_096 {
                _ = try await index.append(buffer, from: folded + 1)
                (folded, buffer) = (folded + Int64(buffer.count), [])
            }
        }
        return VerifiedIndex(checkpoint: published, revisions: records, timesRiseFrom: timesRiseFrom)
    }

    /// Each entry of the tree of `size` leaves, in order, with its position, bundle by bundle.
    func forEachEntry(
        size: Int64, publicEntries: Bool, _ body: (_ position: Int64, _ leaf: [UInt8]) async throws -> Void
    ) async throws {
        var position: Int64 = 0
        for bundle in stride(from: Int64(0), to: size, by: Tile.fullWidth) {
            let width = Int(min(Int64(Tile.fullWidth), size - bundle))
            let tile = Tile(level: nil, index: bundle / Int64(Tile.fullWidth), width: width)
            guard let entries = Tile.entries(ofBundle: try await self.tile(tile, publicEntries: publicEntries)), entries.count == width
            else { throw LogAuditFailure("\(tile.path) does not hold \(width) entries") }
            for entry in entries {
                position += 1
                try await body(position, entry)
            }
        }
    }
}
