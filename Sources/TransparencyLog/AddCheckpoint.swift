import Foundation

/// A C2SP `tlog-witness` v1 `add-checkpoint` request: `old <size>`, the consistency proof (a
/// base64 hash a line, at most 63), a blank line, the signed checkpoint.
public struct AddCheckpoint: Sendable, Equatable {
    public var oldSize: Int64
    public var proof: [MerkleTree.Hash]
    public var note: String

    public init(oldSize: Int64, proof: [MerkleTree.Hash], note: String) {
        self.oldSize = oldSize
        self.proof = proof
        self.note = note
    }

    public var body: String {
        "old \(oldSize)\n" + proof.map { Base64.encode($0) + "\n" }.joined() + "\n" + note
    }

    /// Parses a request body; a `Refusal` with status 400 when it is malformed.
    public init(body: String) throws {
        guard let blank = body.range(of: "\n\n") else { throw Refusal(400, "no blank line after the proof") }
        let head = body[..<blank.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = head.first, first.hasPrefix("old "), let old = Tile.decimal(String(first.dropFirst(4))) else {
            throw Refusal(400, "the first line is `old <size>`, the size in decimal without leading zeroes")
        }
        guard head.count - 1 <= 63 else { throw Refusal(400, "more than 63 proof lines") }
        oldSize = old
        proof = try head.dropFirst().map { line in
            guard let hash = Base64.decode(String(line)), hash.count == 32 else { throw Refusal(400, "a proof line is one base64 hash") }
            return hash
        }
        note = String(body[blank.upperBound...])
    }

    /// What a witness answers besides a cosignature: the status and a text (for a 409, the
    /// witness's size, `text/x.tlog.size`).
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public var status: Int
        public var message: String
        public init(_ status: Int, _ message: String) {
            self.status = status
            self.message = message
        }
        public var description: String { "\(status): \(message)" }
    }

    /// The witness's checks, in the specification's order, against the trusted keys of each
    /// origin and the latest (size, root) it cosigned for the origin: unknown origin 404, no
    /// trusted signature 403, old size past the checkpoint's 400, old size not the latest 409,
    /// same size with another root, a proof that does not verify or is not empty for size 0
    /// 422. Returns the checkpoint and its note text, to record and cosign.
    public func check(logs: [String: [NoteVerifier]], latest: (size: Int64, root: MerkleTree.Hash)?) throws -> (
        checkpoint: Checkpoint, text: String
    ) {
        let (text, signatures) = try Self.parsed(note)
        let checkpoint: Checkpoint
        do { checkpoint = try Checkpoint(text: text) } catch { throw Refusal(400, "\(error)") }
        guard let keys = logs[checkpoint.origin] else { throw Refusal(404, "unknown log \(checkpoint.origin)") }
        var signed = false
        for key in keys {
            for signature in signatures where signature.name == key.name && signature.keyID == key.keyID {
                guard key.verify(signature.bytes, of: Array(text.utf8)) else {
                    throw Refusal(403, "the signature by \(key.name) does not verify")
                }
                signed = true
            }
        }
        guard signed else { throw Refusal(403, "no signature by a key trusted for \(checkpoint.origin)") }
        guard oldSize <= checkpoint.size else { throw Refusal(400, "old size \(oldSize) is past the checkpoint's size \(checkpoint.size)") }
        let (size, root) = latest ?? (0, MerkleTree.emptyRoot)
        guard oldSize == size else { throw Refusal(409, "\(size)\n") }
        if checkpoint.size == 0, checkpoint.rootHash != MerkleTree.emptyRoot { throw Refusal(422, "the empty tree has another root") }
        if oldSize == 0 {
            guard proof.isEmpty else { throw Refusal(422, "the proof from size 0 is empty") }
        } else if oldSize == checkpoint.size {
            guard proof.isEmpty, checkpoint.rootHash == root else {
                throw Refusal(422, "a checkpoint of size \(size) with another root than the one cosigned")
            }
        } else {
            do {
                try MerkleProof.verifyConsistency(
                    size1: oldSize, size2: checkpoint.size, root1: root, root2: checkpoint.rootHash, proof: proof)
            } catch {
                throw Refusal(422, "the consistency proof from \(oldSize) does not verify: \(error)")
            }
        }
        return (checkpoint, text)
    }

    private static func parsed(_ note: String) throws -> (String, [SignedNote.Signature]) {
        do { return try SignedNote.parse(note) } catch { throw Refusal(400, "\(error)") }
    }
}
