import Crypto
import Foundation
import LedgerWire
import TransparencyLog

/// Personal values in the log (SPEC "Personal data and erasure"): an account appears in events as
/// a pseudonym (`psn-<random uuid>`, made by `ledger_subject` in Migrations/sql/0017, the mapping
/// kept in an erasable table), and a handle, name or title
/// as a commitment (`commitment:<base64 of HMAC-SHA256(key: opening, message: value)>`, the
/// construction of the IETF Key Transparency draft), its opening and plaintext kept in an erasable
/// table under the subject they belong to. Leaves, chain hashes and checkpoints cover only these.
public enum PersonalData {
    public static let pseudonymPrefix = "psn-"
    public static let commitmentPrefix = "commitment:"
    public static let erasedPrefix = "erased:"

    public static func isPseudonym(_ text: String) -> Bool { text.hasPrefix(pseudonymPrefix) }

    /// How reads show the account behind `pseudonym` once it is erased.
    public static func erased(_ pseudonym: String) -> String { erasedPrefix + pseudonym }

    /// A value committed to: its plaintext, its opening (32 random bytes) and the commitment.
    public struct Commitment: Sendable, Hashable {
        public enum Kind: String, Codable, Sendable, CaseIterable { case title, handle, name }

        public var kind: Kind
        public var value: String
        public var opening: [UInt8]

        public init(kind: Kind, value: String, opening: [UInt8]? = nil) {
            self.kind = kind
            self.value = value
            self.opening = opening ?? Self.randomOpening()
        }

        /// `HMAC-SHA256(key: opening, message: UTF-8 value)`.
        public var digest: [UInt8] { Self.digest(value: value, opening: opening) }

        /// As events hold it: `commitment:<base64 digest>`.
        public var text: String { commitmentPrefix + Base64.encode(digest) }

        public static func digest(value: String, opening: [UInt8]) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: Array(value.utf8), using: SymmetricKey(data: opening)))
        }

        /// Whether `value` with `opening` gives the commitment `text` (an auditor's check).
        public static func opens(_ text: String, value: String, opening: [UInt8]) -> Bool {
            guard let digest = PersonalData.digest(of: text) else { return false }
            return digest == Self.digest(value: value, opening: opening)
        }

        /// 32 bytes from the system's CSPRNG, drawn 8 at a time.
        static func randomOpening() -> [UInt8] {
            var generator = SystemRandomNumberGenerator()
            return (0..<4).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        }
    }

    /// The 32-byte digest of a commitment as events hold it; nil for any other text.
    public static func digest(of text: String) -> [UInt8]? {
        guard text.hasPrefix(commitmentPrefix), let bytes = Base64.decode(String(text.dropFirst(commitmentPrefix.count))), bytes.count == 32
        else { return nil }
        return bytes
    }

    /// The fields of an event's data that hold an account (a pseudonym, or a plaintext account in
    /// an event older than pseudonyms) and those that hold a committed value.
    public static func accountFields(_ type: String) -> [String] {
        switch type {
        case "CollaborationStarted": ["owner"]
        case "PersonalDataErased": ["pseudonym", "requester"]
        default: ["account"]
        }
    }

    public static let valueFields = ["title", "initiatorHandle", "initiatorName"]
}
