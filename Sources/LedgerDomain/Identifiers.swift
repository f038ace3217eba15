import Crypto
import Foundation

public enum Identifiers {
    /// A collaboration id is the lowercase UUID the ledger handed out; anything else is unknown.
    public static func collaborationId(_ id: String) throws -> String {
        guard let uuid = UUID(uuidString: id), uuid.uuidString.lowercased() == id.lowercased() else {
            throw DomainError(.notFound, "not_found", "collaboration not found")
        }
        return id.lowercased()
    }

    /// A name-based UUID (SHA-256 of the text, version 5 layout): the same text always gives
    /// the same id, which is how retries and repeated decisions meet their first append.
    public static func derivedUUID(_ text: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(text.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
