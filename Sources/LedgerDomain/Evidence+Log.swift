import Foundation
import LedgerWire
import TransparencyLog

// The wire's forms of what the log gives, built in one place for every evidence and proof the
// ledger answers (one database's, a shard's and the top log's).
extension Evidence.Event {
    /// The event as evidence shows it: its stored JSON texts, its time with microseconds.
    public init(_ event: RecordedEvent) {
        self.init(
            position: event.position, streamId: event.streamId, version: event.version, eventId: event.eventId.uuidString.lowercased(),
            type: event.type, data: event.data, metadata: event.metadata, recordedAt: RecordedTime.text(micros: event.recordedAtMicros))
    }
}

extension InclusionProof {
    /// The proof of the entry at log `position` (leaf `position − 1`) in the tree of `size`, as
    /// the log's tree gives it (`leafHash` and the path's `hashes`), written in base64.
    public init(position: Int64, size: Int64, leafHash: [UInt8], hashes: [[UInt8]]) {
        self.init(
            position: position, treeSize: size, leafIndex: position - 1, leafHash: Base64.encode(leafHash),
            hashes: hashes.map(Base64.encode))
    }
}

extension IndexLookup.Entry {
    /// `event`'s leaf, as the tiles serve it, with its inclusion proof in the tree of `size`.
    public init(_ event: RecordedEvent, size: Int64, leafHash: [UInt8], hashes: [[UInt8]]) {
        self.init(
            leaf: Base64.encode(EventLeaf.bytes(event)),
            inclusion: InclusionProof(position: event.position, size: size, leafHash: leafHash, hashes: hashes))
    }
}
