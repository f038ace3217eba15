import Foundation
import LedgerWire
import TransparencyLog

extension Base64 {
    /// Decodes a field that must hold exactly `count` bytes.
    public static func decode(_ text: String, field: String, count: Int) throws -> [UInt8] {
        guard let bytes = decode(text) else {
            throw DomainError.invalid("\(field) is not valid standard base64", code: .invalidBase64)
        }
        guard bytes.count == count else {
            throw DomainError.invalid("\(field) must be \(count) bytes, got \(bytes.count)", code: .invalidLength)
        }
        return bytes
    }
}

/// A recipient identity: the 32-byte root hash of the Merkle tree over its device keys.
public struct RootHash: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw DomainError.invalid("a root hash must be 32 bytes, got \(bytes.count)", code: .invalidLength)
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
