import Crypto
import Foundation

/// A witness's key for C2SP `tlog-cosignature` v1 (Ed25519, signature type 0x04): the vkey
/// `name+<8 hex digits of key id>+<base64(0x04 || 32-byte public key)>`, key id = the first 4
/// bytes of `SHA256(name || 0x0A || 0x04 || public key)`.
///
/// A cosignature is a note signature line whose bytes are `key id (4) || u64 BE time || Ed25519
/// (64)`, the Ed25519 signature over `"cosignature/v1\ntime <time>\n"` followed by the
/// checkpoint's whole note text. It says: as of `time`, the largest consistent tree the witness
/// has seen for the origin has this root.
public struct CosignatureVerifier: Sendable, Hashable {
    public let name: String
    public let keyID: UInt32
    public let publicKey: [UInt8]
    static let type: UInt8 = 0x04

    public init(name: String, publicKey: [UInt8]) throws {
        try NoteVerifier.checkName(name)
        guard publicKey.count == 32 else { throw NoteError("an Ed25519 public key is 32 bytes, got \(publicKey.count)") }
        self.name = name
        self.publicKey = publicKey
        let digest = Array(SHA256.hash(data: Array(name.utf8) + [0x0A, Self.type] + publicKey))
        self.keyID = digest[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    public init(_ text: String) throws {
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(
            separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].count == 8, let id = UInt32(parts[1], radix: 16),
            let key = Base64.decode(String(parts[2])), key.count == 33, key[0] == Self.type
        else { throw NoteError("a witness key looks like name+<8 hex digits>+<base64 of 0x04 and 32 key bytes>") }
        try self.init(name: String(parts[0]), publicKey: Array(key[1...]))
        guard keyID == id else { throw NoteError("witness key id \(parts[1]) does not match its name and key") }
    }

    public var text: String { "\(name)+\(NoteVerifier.hex(keyID))+\(Base64.encode([Self.type] + publicKey))" }

    /// The message a cosignature at `time` signs: the header, the time, the note text.
    public static func message(text: String, time: UInt64) -> [UInt8] {
        Array("cosignature/v1\ntime \(time)\n\(text)".utf8)
    }

    /// The time of this key's cosignature of `text` among `signatures`; nil when there is none
    /// (other keys' lines are ignored). Throws when this key's line does not verify.
    public func time(of text: String, in signatures: [SignedNote.Signature]) throws -> UInt64? {
        var verified: UInt64?
        for signature in signatures where signature.name == name && signature.keyID == keyID {
            guard signature.bytes.count == 72 else { throw NoteError("a cosignature by \(name) is not 72 bytes") }
            let time = signature.bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard time <= UInt64(Int64.max), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey),
                key.isValidSignature(Array(signature.bytes[8...]), for: Self.message(text: text, time: time))
            else { throw NoteError("the cosignature by \(name) does not verify") }
            verified = max(verified ?? 0, time)
        }
        return verified
    }
}

/// The signing side of a witness: stored as `PRIVATE+KEY+name+<8 hex digits>+<base64(0x04 ||
/// 32-byte seed)>`.
public struct Cosigner: Sendable {
    public let verifier: CosignatureVerifier
    private let key: Curve25519.Signing.PrivateKey

    public init(name: String, key: Curve25519.Signing.PrivateKey = .init()) throws {
        self.key = key
        self.verifier = try CosignatureVerifier(name: name, publicKey: Array(key.publicKey.rawRepresentation))
    }

    public init(_ text: String) throws {
        let (name, id, idText, key) = try PrivateKeyText.parse(
            text, type: CosignatureVerifier.type,
            usage: "a witness signing key looks like PRIVATE+KEY+name+<8 hex digits>+<base64 of 0x04 and 32 seed bytes>")
        try self.init(name: name, key: key)
        guard verifier.keyID == id else { throw NoteError("witness signing key id \(idText) does not match its name and key") }
    }

    public var name: String { verifier.name }
    public var text: String { PrivateKeyText.format(name: name, keyID: verifier.keyID, type: CosignatureVerifier.type, key: key) }

    /// The cosignature line (ending in a newline) of the note text `text` at `time`.
    public func cosign(_ text: String, time: UInt64) throws -> String {
        let signature = try key.signature(for: CosignatureVerifier.message(text: text, time: time))
        let id = withUnsafeBytes(of: verifier.keyID.bigEndian) { Array($0) }
        let stamp = withUnsafeBytes(of: time.bigEndian) { Array($0) }
        return "\u{2014} \(name) \(Base64.encode(id + stamp + Array(signature)))\n"
    }
}
