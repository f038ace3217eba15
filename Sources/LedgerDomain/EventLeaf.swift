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
