import Crypto
import Foundation

/// The text form of an Ed25519 signing key, as Go's `note` package writes it:
/// `PRIVATE+KEY+name+<8 hex digits of key id>+<base64(type || 32-byte seed)>`, where the type
/// byte is the signature's kind (0x01 a note signature, 0x04 a cosignature). `NoteSigner` and
/// `Cosigner` both read and write their keys through it.
enum PrivateKeyText {
    /// The name, key id (and its digits as written) and key of `text`; `usage` is the error
    /// message when it is not one of `type`.
    static func parse(_ text: String, type: UInt8, usage: String) throws
        -> (name: String, id: UInt32, idText: String, key: Curve25519.Signing.PrivateKey)
    {
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(
            separator: "+", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "PRIVATE", parts[1] == "KEY", let id = UInt32(parts[3], radix: 16),
            let seed = Base64.decode(String(parts[4])), seed.count == 33, seed[0] == type,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed[1...])
        else { throw NoteError(usage) }
        return (String(parts[2]), id, String(parts[3]), key)
    }

    static func format(name: String, keyID: UInt32, type: UInt8, key: Curve25519.Signing.PrivateKey) -> String {
        "PRIVATE+KEY+\(name)+\(NoteVerifier.hex(keyID))+\(Base64.encode([type] + Array(key.rawRepresentation)))"
    }
}
