import Foundation

/// Opens a C2SP `signed-note`: the text, a blank line, then signature lines
/// `— <key name> <base64(4-byte key id || signature)>`. Written from the specification;
/// our signer (`NoteSigner`) is tested against it, not the other way round.
public enum SignedNote {
    /// More signature lines than this is refused (the specification asks for at least 16).
    static let maxSignatures = 64

    /// A signature line: the key's name, its 4-byte id, and the signature bytes after the id.
    public struct Signature: Sendable, Equatable {
        public var name: String
        public var keyID: UInt32
        public var bytes: [UInt8]
        /// The line as the note holds it (with its newline).
        public var line: String
    }

    /// Splits a note into its text (ending in its newline) and its signature lines, checking
    /// only their form.
    public static func parse(_ note: String) throws -> (text: String, signatures: [Signature]) {
        guard note.hasSuffix("\n") else { throw NoteError("a signed note ends with a newline") }
        try checkCharacters(note)
        // The text ends at the last blank line; the signature lines follow it.
        guard let split = note.range(of: "\n\n", options: .backwards) else {
            throw NoteError("no blank line between the note text and its signatures")
        }
        let text = String(note[..<split.lowerBound]) + "\n"
        let lines = note[split.upperBound...].dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count <= maxSignatures else { throw NoteError("more than \(maxSignatures) signatures") }
        let signatures = try lines.map { line in
            guard line.hasPrefix("\u{2014} ") else { throw NoteError("malformed signature line: \(String(line).debugDescription)") }
            let fields = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2, !fields[0].isEmpty, let blob = Base64.decode(String(fields[1])), blob.count > 4 else {
                throw NoteError("malformed signature line: \(String(line).debugDescription)")
            }
            return Signature(
                name: String(fields[0]), keyID: blob[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, bytes: Array(blob[4...]),
                line: String(line) + "\n")
        }
        return (text, signatures)
    }

    /// Returns the note's text (ending in its newline) once a signature by `verifier` checks.
    /// Signatures by other keys are ignored; one by `verifier` that fails rejects the note.
    public static func open(_ note: String, verifier: NoteVerifier) throws -> String {
        let (text, signatures) = try parse(note)
        var verified = false
        for signature in signatures where signature.name == verifier.name && signature.keyID == verifier.keyID {
            guard verifier.verify(signature.bytes, of: Array(text.utf8)) else {
                throw NoteError("the signature by \(verifier.name) does not verify: the note was altered or signed by another key")
            }
            verified = true
        }
        guard verified else {
            throw NoteError("not signed by the key \(verifier.name)+\(NoteVerifier.hex(verifier.keyID)) (signed by another key?)")
        }
        return text
    }

    /// A note text: non-empty, ends in a newline, no control characters but newlines.
    static func checkText(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw NoteError("a note text ends with a newline") }
        try checkCharacters(text)
    }

    private static func checkCharacters(_ text: String) throws {
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" }) else {
            throw NoteError("a note holds no control characters but newlines")
        }
    }
}
