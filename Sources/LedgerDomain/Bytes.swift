import Foundation

/// Standard base64 for binary values in JSON, decoded strictly.
public enum Base64 {
    public static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// Decodes standard base64 (with padding); nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.count % 4 == 0, let data = Data(base64Encoded: text) else { return nil }
        // Reject non-canonical encodings (stray bits in the padding) so one value has one spelling.
        guard data.base64EncodedString() == text else { return nil }
        return Array(data)
    }

    /// Decodes a field that must hold exactly `count` bytes.
    public static func decode(_ text: String, field: String, count: Int) throws -> [UInt8] {
        guard let bytes = decode(text) else {
            throw DomainError.invalid("\(field) is not valid standard base64", code: "invalid_base64")
        }
        guard bytes.count == count else {
            throw DomainError.invalid("\(field) must be \(count) bytes, got \(bytes.count)", code: "invalid_length")
        }
        return bytes
    }
}

/// A recipient identity: the 32-byte root hash of the Merkle tree over its device keys.
public struct RootHash: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw DomainError.invalid("a root hash must be 32 bytes, got \(bytes.count)", code: "invalid_length")
        }
        self.bytes = bytes
    }

    public init(base64 text: String, field: String = "rootHash") throws {
        self.bytes = try Base64.decode(text, field: field, count: 32)
    }

    public var base64: String { Base64.encode(bytes) }
    public var description: String { base64 }

    public static func < (a: RootHash, b: RootHash) -> Bool { a.base64 < b.base64 }

    public init(from decoder: any Decoder) throws {
        try self.init(base64: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base64)
    }
}
