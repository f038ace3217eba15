import Crypto
import Foundation

/// An Ed25519 verifier key of C2SP `signed-note`: the text `name+<8 hex digits of key id>+
/// <base64(0x01 || 32-byte public key)>`, key id = the first 4 bytes (big-endian) of
/// `SHA256(name || 0x0A || 0x01 || public key)`. Go's `golang.org/x/mod/sumdb/note` reads it.
public struct NoteVerifier: Sendable, Equatable {
    public let name: String
    public let keyID: UInt32
    public let publicKey: [UInt8]

    public init(name: String, publicKey: [UInt8]) throws {
        try Self.checkName(name)
        guard publicKey.count == 32 else { throw NoteError("an Ed25519 public key is 32 bytes, got \(publicKey.count)") }
        self.name = name
        self.publicKey = publicKey
        self.keyID = Self.keyID(name: name, publicKey: publicKey)
    }

    /// Parses the verifier key text; the key id it states must match its name and key.
    public init(_ text: String) throws {
        // The base64 part may itself hold '+': cut at the first two only.
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(
            separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let id = UInt32(parts[1], radix: 16), parts[1].count == 8,
            let key = Base64.decode(String(parts[2])), key.count == 33, key[0] == 0x01
        else { throw NoteError("a verifier key looks like name+<8 hex digits>+<base64 of 0x01 and 32 key bytes>") }
        try self.init(name: String(parts[0]), publicKey: Array(key[1...]))
        guard keyID == id else { throw NoteError("verifier key id \(parts[1]) does not match its name and key") }
    }

    public var text: String { "\(name)+\(Self.hex(keyID))+\(Base64.encode([0x01] + publicKey))" }

    /// True when `signature` is this key's Ed25519 signature of `message`.
    public func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    static func keyID(name: String, publicKey: [UInt8]) -> UInt32 {
        let digest = Array(SHA256.hash(data: Array(name.utf8) + [0x0A, 0x01] + publicKey))
        return digest[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func hex(_ id: UInt32) -> String {
        let digits = String(id, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// Key names are non-empty, without Unicode spaces or `+`.
    static func checkName(_ name: String) throws {
        guard !name.isEmpty, !name.contains("+"), !name.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 })
        else { throw NoteError("a key name must be non-empty, without spaces or '+': \(name.debugDescription)") }
    }
}

/// The signing side: an Ed25519 key and its name, stored as Go's `note` package writes it:
/// `PRIVATE+KEY+name+<8 hex digits of key id>+<base64(0x01 || 32-byte seed)>`.
public struct NoteSigner: Sendable {
    public let verifier: NoteVerifier
    private let key: Curve25519.Signing.PrivateKey

    public init(name: String, key: Curve25519.Signing.PrivateKey = .init()) throws {
        self.key = key
        self.verifier = try NoteVerifier(name: name, publicKey: Array(key.publicKey.rawRepresentation))
    }

    public init(_ text: String) throws {
        let (name, id, idText, key) = try PrivateKeyText.parse(
            text, type: 0x01, usage: "a signing key looks like PRIVATE+KEY+name+<8 hex digits>+<base64 of 0x01 and 32 seed bytes>")
        try self.init(name: name, key: key)
        guard verifier.keyID == id else { throw NoteError("signing key id \(idText) does not match its name and key") }
    }

    public var name: String { verifier.name }

    /// The same key under another name: another key id, so a verifier of one name never accepts
    /// what the other signs (each shard's log is its own origin, signed with the deployment's key).
    public func renamed(_ name: String) throws -> NoteSigner { try NoteSigner(name: name, key: key) }

    public var text: String { PrivateKeyText.format(name: name, keyID: verifier.keyID, type: 0x01, key: key) }

    /// The signed note: `text` (which must end in a newline), a blank line, the signature line.
    public func sign(_ text: String) throws -> String {
        try SignedNote.checkText(text)
        let signature = try key.signature(for: Array(text.utf8))
        let id = withUnsafeBytes(of: verifier.keyID.bigEndian) { Array($0) }
        return text + "\n\u{2014} \(name) \(Base64.encode(id + Array(signature)))\n"
    }
}

public struct NoteError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
