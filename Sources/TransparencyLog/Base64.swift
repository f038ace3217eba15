import Foundation

/// Standard base64, decoded strictly: hashes, keys and signatures in notes and JSON.
public enum Base64 {
    public static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// Decodes standard base64 (with padding); nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.count % 4 == 0, let data = Data(base64Encoded: text) else { return nil }
        // Reject non-canonical encodings (stray bits in the padding) so one value has one spelling.
        guard data.base64EncodedString() == text else { return nil }
        return Array(data)
    }
}
