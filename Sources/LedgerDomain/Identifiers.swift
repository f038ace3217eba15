import Crypto
import Foundation
import LedgerWire

public enum Identifiers {
    /// A collaboration id is the lowercase UUID the ledger handed out; anything else is unknown.
    public static func collaborationId(_ id: String) throws -> String {
        guard let uuid = UUID(uuidString: id), uuid.uuidString.lowercased() == id.lowercased() else {
            throw DomainError.collaborationNotFound
        }
        return id.lowercased()
    }

    /// A name-based UUID (SHA-256 of the text, version 5 layout): the same text always gives
    /// the same id, which is how retries and repeated decisions meet their first append.
    public static func derivedUUID(_ text: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(text.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// A time-ordered UUID (RFC 9562 version 7): 48 bits of Unix milliseconds, 12 bits of the
    /// millisecond's fraction, 62 random bits. Ids made one after the other sort near each
    /// other, so a unique index on them grows at its right edge instead of at random pages.
    public static func timeOrderedUUID(now: Date = Date()) -> UUID {
        let milliseconds = now.timeIntervalSince1970 * 1000
        let whole = UInt64(max(0, milliseconds))
        let fraction = UInt16(min(4095, max(0, (milliseconds - Double(whole)) * 4096)))
        var random = SystemRandomNumberGenerator()
        let tail: UInt64 = random.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: whole >> (8 * (5 - i))) }
        bytes[6] = 0x70 | UInt8(fraction >> 8)
        bytes[7] = UInt8(truncatingIfNeeded: fraction)
        for i in 0..<8 { bytes[8 + i] = UInt8(truncatingIfNeeded: tail >> (8 * (7 - i))) }
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
