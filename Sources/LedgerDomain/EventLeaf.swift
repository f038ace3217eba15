import Foundation

/// An event's canonical bytes: the leaf data of the verifiable log and, after the previous
/// hash, the input of the hash chain (SPEC "Verifiable log", "Leaves").
///
/// `u64(position) || str(streamId) || u64(version) || uuid(eventId) || str(type) ||
/// str(data) || str(metadata) || i64(recordedAtMicros)`, integers big-endian, `str` a u32
/// big-endian byte length then the UTF-8 bytes, `uuid` its 16 bytes, `data` and `metadata`
/// the exact stored JSON text. Must match `ledger_leaf` in Migrations/sql.
public enum EventLeaf {
    public static func bytes(
        position: Int64, streamId: String, version: Int64, eventId: UUID, type: String, data: String, metadata: String,
        recordedAtMicros: Int64
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + streamId.utf8.count + type.utf8.count + data.utf8.count + metadata.utf8.count)
        out.append(integer: UInt64(bitPattern: position))
        out.append(string: streamId)
        out.append(integer: UInt64(bitPattern: version))
        Swift.withUnsafeBytes(of: eventId.uuid) { out.append(contentsOf: $0) }
        out.append(string: type)
        out.append(string: data)
        out.append(string: metadata)
        out.append(integer: UInt64(bitPattern: recordedAtMicros))
        return out
    }

    public static func bytes(_ e: RecordedEvent) -> [UInt8] {
        bytes(
            position: e.position, streamId: e.streamId, version: e.version, eventId: e.eventId, type: e.type, data: e.data,
            metadata: e.metadata, recordedAtMicros: e.recordedAtMicros)
    }

    /// The event a leaf holds, read back from its bytes alone (a tlog-proof carries the leaf as
    /// its entry, nothing else). Nil unless `leaf` is exactly what `bytes` writes for the event
    /// read: every length within the leaf, every text valid UTF-8, nothing left over. The leaf
    /// does not hold the chain hash: `hash` is empty.
    public static func event(from leaf: [UInt8]) -> RecordedEvent? {
        var at = 0
        func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard leaf.count - at >= count else { return nil }
            defer { at += count }
            return leaf[at..<at + count]
        }
        func integer() -> Int64? {
            guard let big = take(8) else { return nil }
            return Int64(bitPattern: big.reduce(UInt64(0)) { value, byte in value << 8 | UInt64(byte) })
        }
        func string() -> String? {
            guard let big = take(4) else { return nil }
            let length = big.reduce(UInt32(0)) { value, byte in value << 8 | UInt32(byte) }
            guard let utf8 = take(Int(length)) else { return nil }
            return String(decoding: utf8, as: UTF8.self)
        }
        guard let position = integer(), let streamId = string(), let version = integer(), let id = take(16).map({ Array($0) }),
            let type = string(), let data = string(), let metadata = string(), let micros = integer(), at == leaf.count
        else { return nil }
        let eventId = UUID(
            uuid: (
                id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12], id[13], id[14], id[15]
            ))
        let event = RecordedEvent(
            position: position, streamId: streamId, version: version, eventId: eventId, type: type, data: data, metadata: metadata,
            recordedAtMicros: micros, hash: [])
        // Bytes that are not UTF-8 decode to U+FFFD and write back otherwise: refused, so a leaf
        // reads as one event and that event writes as that leaf.
        return bytes(event) == leaf ? event : nil
    }
}

extension [UInt8] {
    fileprivate mutating func append(integer: UInt64) {
        Swift.withUnsafeBytes(of: integer.bigEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func append(string: String) {
        let utf8 = string.utf8
        append(integer32: UInt32(utf8.count))
        append(contentsOf: utf8)
    }

    fileprivate mutating func append(integer32: UInt32) {
        Swift.withUnsafeBytes(of: integer32.bigEndian) { append(contentsOf: $0) }
    }
}
