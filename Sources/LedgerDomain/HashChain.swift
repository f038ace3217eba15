import Crypto
import Foundation

/// The log's tamper evidence: each event's hash covers its exact stored content and the
/// previous event's hash, so changing, removing or reordering any event breaks every hash
/// after it.
///
/// `hash = SHA256(previousHash || leaf)`, the leaf being the event's canonical bytes
/// (`EventLeaf`). The first event's previous hash is 32 zero bytes. The chain alone proves
/// nothing to someone who can rewrite the table; signed checkpoints over the Merkle tree of
/// the same leaves (`MerkleTree`, `Checkpoint`) do.
public enum HashChain {
    public static let genesis = [UInt8](repeating: 0, count: 32)

    public static func hash(
        previous: [UInt8], position: Int64, streamId: String, version: Int64, eventId: UUID,
        type: String, data: String, metadata: String, recordedAtMicros: Int64
    ) -> [UInt8] {
        hash(
            previous: previous,
            leaf: EventLeaf.bytes(
                position: position, streamId: streamId, version: version, eventId: eventId, type: type, data: data,
                metadata: metadata, recordedAtMicros: recordedAtMicros))
    }

    /// `SHA256(previous || leaf)`, the leaf being the event's canonical bytes (`EventLeaf`).
    public static func hash(previous: [UInt8], leaf: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: previous)
        hasher.update(data: leaf)
        return Array(hasher.finalize())
    }

    public static func hash(previous: [UInt8], event e: RecordedEvent) -> [UInt8] {
        hash(
            previous: previous, position: e.position, streamId: e.streamId, version: e.version,
            eventId: e.eventId, type: e.type, data: e.data, metadata: e.metadata,
            recordedAtMicros: e.recordedAtMicros)
    }

    /// Walks events in position order and reports the first that does not match.
    public struct Verifier: Sendable {
        public private(set) var previousHash: [UInt8]
        public private(set) var expectedPosition: Int64
        public private(set) var checked: Int64 = 0

        public init(previousHash: [UInt8] = HashChain.genesis, nextPosition: Int64 = 1) {
            self.previousHash = previousHash
            self.expectedPosition = nextPosition
        }

        /// Returns the failure for `event`, or nil when it continues the chain. `leaf`: the
        /// event's canonical bytes, when the caller has them already (`EventLeaf.bytes(event)`).
        public mutating func check(_ event: RecordedEvent, leaf: [UInt8]? = nil) -> Failure? {
            if event.position != expectedPosition {
                return Failure(position: expectedPosition, reason: .missing(found: event.position))
            }
            let computed = HashChain.hash(previous: previousHash, leaf: leaf ?? EventLeaf.bytes(event))
            if computed != event.hash {
                return Failure(position: event.position, reason: .hashMismatch)
            }
            previousHash = event.hash
            expectedPosition += 1
            checked += 1
            return nil
        }
    }

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable {
            case hashMismatch
            case missing(found: Int64?)
            case headMismatch
        }
        public var position: Int64
        public var reason: Reason

        public init(position: Int64, reason: Reason) {
            self.position = position
            self.reason = reason
        }

        public var description: String {
            switch reason {
            case .hashMismatch: "position \(position): stored hash does not match its content and the previous hash"
            case .missing(let found?): "position \(position): missing (next stored event is \(found))"
            case .missing(nil): "position \(position): missing (the log ends before its recorded head)"
            case .headMismatch: "position \(position): the recorded head hash does not match the last event"
            }
        }
    }
}
