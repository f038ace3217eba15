import Crypto
import Foundation

/// The log's tamper evidence: each event's hash covers its exact stored content and the
/// previous event's hash, so changing, removing or reordering any event breaks every hash
/// after it.
///
/// `hash = SHA256(previousHash || u64(position) || str(streamId) || u64(version) ||
/// uuid(eventId) || str(type) || str(data) || str(metadata) || i64(recordedAtMicros))`
/// where integers are big-endian and `str` is a u32 big-endian byte length followed by the
/// UTF-8 bytes. The first event's previous hash is 32 zero bytes.
public enum HashChain {
    public static let genesis = [UInt8](repeating: 0, count: 32)

    public static func hash(
        previous: [UInt8], position: Int64, streamId: String, version: Int64, eventId: UUID,
        type: String, data: String, metadata: String, recordedAtMicros: Int64
    ) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: previous)
        hasher.update(integer: UInt64(bitPattern: position))
        hasher.update(string: streamId)
        hasher.update(integer: UInt64(bitPattern: version))
        withUnsafeBytes(of: eventId.uuid) { hasher.update(bufferPointer: $0) }
        hasher.update(string: type)
        hasher.update(string: data)
        hasher.update(string: metadata)
        hasher.update(integer: UInt64(bitPattern: recordedAtMicros))
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

        /// Returns the failure for `event`, or nil when it continues the chain.
        public mutating func check(_ event: RecordedEvent) -> Failure? {
            if event.position != expectedPosition {
                return Failure(position: expectedPosition, reason: .missing(found: event.position))
            }
            let computed = HashChain.hash(previous: previousHash, event: event)
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

extension SHA256 {
    fileprivate mutating func update(integer: UInt64) {
        withUnsafeBytes(of: integer.bigEndian) { update(bufferPointer: $0) }
    }

    fileprivate mutating func update(string: String) {
        let bytes = Array(string.utf8)
        withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { update(bufferPointer: $0) }
        update(data: bytes)
    }
}
