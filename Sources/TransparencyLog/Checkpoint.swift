import Foundation

/// The note text of a C2SP `tlog-checkpoint`: origin, tree size in decimal, base64 root
/// hash, each on its own line (no extension lines: the specification advises against them).
public struct Checkpoint: Sendable, Equatable {
    public var origin: String
    public var size: Int64
    public var rootHash: MerkleTree.Hash

    public init(origin: String, size: Int64, rootHash: MerkleTree.Hash) {
        self.origin = origin
        self.size = size
        self.rootHash = rootHash
    }

    public var text: String { "\(origin)\n\(size)\n\(Base64.encode(rootHash))\n" }

    /// Parses a note text (as `SignedNote.open` returns it). Extension lines are allowed and
    /// ignored, as the specification says; they must be non-empty.
    public init(text: String) throws {
        guard text.hasSuffix("\n") else { throw NoteError("a checkpoint ends with a newline") }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3 else { throw NoteError("a checkpoint has at least three lines: origin, size, root hash") }
        guard lines.allSatisfy({ !$0.isEmpty }) else { throw NoteError("a checkpoint has no empty lines") }
        let sizeText = String(lines[1])
        guard sizeText.allSatisfy({ $0.isASCII && $0.isNumber }), let size = Int64(sizeText), String(size) == sizeText else {
            throw NoteError("checkpoint size \(sizeText.debugDescription) is not a decimal number without leading zeroes")
        }
        guard let root = Base64.decode(String(lines[2])), root.count == 32 else {
            throw NoteError("checkpoint root hash is not 32 bytes of standard base64")
        }
        self.init(origin: String(lines[0]), size: size, rootHash: root)
    }

    /// Opens a signed checkpoint: the signature by `verifier` must check, and the origin must
    /// be the key's name (how this log names itself).
    public static func open(_ note: String, verifier: NoteVerifier) throws -> Checkpoint {
        let checkpoint = try Checkpoint(text: SignedNote.open(note, verifier: verifier))
        guard checkpoint.origin == verifier.name else {
            throw NoteError("checkpoint origin \(checkpoint.origin) is not the key's name \(verifier.name)")
        }
        return checkpoint
    }
}
