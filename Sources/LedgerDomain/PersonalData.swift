import Crypto
import Foundation
import LedgerWire
import TransparencyLog

/// Personal values in the log (SPEC "Personal data and erasure"): an account appears in events as
/// a pseudonym (`psn-<random uuid>`, made by `ledger_subject` in Migrations/sql/0017, the mapping
/// kept in an erasable table), and every free text a caller gives (a handle, name, title, local
/// identifier, share options' summary and titles) as a commitment (`commitment:<base64 of
/// HMAC-SHA256(key: opening, message: value)>`, the construction of the IETF Key Transparency
/// draft), its opening and plaintext kept in an erasable table under the subject they belong to.
/// Leaves, chain hashes and checkpoints cover only these, and the SHA-256 digests of the
/// `Idempotency-Key` and `X-Request-Id` a client sends (`clientTextDigest`).
public enum PersonalData {
    public static let pseudonymPrefix = "psn-"
    public static let commitmentPrefix = "commitment:"
    public static let erasedPrefix = "erased:"

    public static func isPseudonym(_ text: String) -> Bool { text.hasPrefix(pseudonymPrefix) }

    /// How reads show the account behind `pseudonym` once it is erased.
    public static func erased(_ pseudonym: String) -> String { erasedPrefix + pseudonym }

    /// A value committed to: its plaintext, its opening (32 random bytes) and the commitment.
    public struct Commitment: Sendable, Hashable {
        /// Stored in `ledger_personal_values.kind` (its CHECK lists them: Migrations/sql/0020).
        public enum Kind: String, Codable, Sendable, CaseIterable {
            case title, handle, name, localIdentifier, summary, groupTitle, optionTitle
        }

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

    /// How an `Idempotency-Key` or `X-Request-Id` a client sends is kept (in event metadata, log
    /// lines): the lowercase hex of its UTF-8 bytes' SHA-256, 64 characters. A client finds its
    /// own by hashing what it sent; the text itself is kept nowhere.
    public static func clientTextDigest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The fields of an event's data that hold an account (a pseudonym, or a plaintext account in
    /// an event older than pseudonyms).
    public static func accountFields(_ type: String) -> [String] {
        switch type {
        case "CollaborationStarted": ["owner"]
        case "PersonalDataErased": ["pseudonym", "requester"]
        default: ["account"]
        }
    }

    /// The top-level fields of an event's data that hold a committed value (or, in an event older
    /// than commitments, the plaintext). A start's share options hold more: `mapValues`.
    public static let valueFields = ["title", "initiatorHandle", "initiatorName", "localIdentifier"]

    /// `data` with every field holding a committed value replaced by `transform` of its text: the
    /// top-level `valueFields`, and in `shareOptions` the summary and each group's and option's
    /// title (identifiers, kinds and selections are not personal values). Anything else, and
    /// data of another shape, as it is.
    public static func mapValues(in data: JSONValue, _ transform: (String) -> JSONValue) -> JSONValue {
        guard case .object(var fields) = data else { return data }
        for field in valueFields { mapped(&fields, field, transform) }
        guard case .object(var options)? = fields["shareOptions"] else { return .object(fields) }
        mapped(&options, "summary", transform)
        options["groups"] = titled(options["groups"], transform) { group in
            group["options"] = titled(group["options"], transform)
        }
        fields["shareOptions"] = .object(options)
        return .object(fields)
    }

    /// An array's objects with their `title` mapped (and `inside` done to each); anything else as it is.
    private static func titled(
        _ list: JSONValue?, _ transform: (String) -> JSONValue, inside: (inout [String: JSONValue]) -> Void = { _ in }
    ) -> JSONValue? {
        guard case .array(let items)? = list else { return list }
        return .array(
            items.map { item in
                guard case .object(var object) = item else { return item }
                mapped(&object, "title", transform)
                inside(&object)
                return .object(object)
            })
    }

    private static func mapped(_ object: inout [String: JSONValue], _ field: String, _ transform: (String) -> JSONValue) {
        if case .string(let text)? = object[field] { object[field] = transform(text) }
    }
}
