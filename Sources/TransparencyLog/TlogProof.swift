/// A C2SP `tlog-proof@v1` (c2sp.org/tlog-proof): an offline-verifiable proof that an entry is
/// in a log, as one text. Formatted and parsed byte for byte as the specification writes it:
///
/// ```
/// c2sp.org/tlog-proof@v1
/// extra <base64 of the extra data>      (only when there is extra data)
/// index <zero-based index in decimal, no leading zeroes>
/// <base64 hash>                          (zero or more lines: the RFC 6962 inclusion proof,
/// …                                       from the leaf's sibling up to the root's child)
/// <empty line>
/// <the checkpoint: the signed note, with its cosignatures, verbatim>
/// ```
///
/// Lines end in U+000A alone; base64 is standard with padding (RFC 4648 §4), one spelling per
/// value. The extra data is not authenticated: a verifier computes the leaf hash from what it
/// knows (the specification's step 1), and trusts the extra data only once the inclusion proof
/// binds that hash to a checkpoint that verified.
public struct TlogProof: Sendable, Equatable {
    /// The first line.
    public static let header = "c2sp.org/tlog-proof@v1"
    /// A tree has fewer than 2^63 leaves, so an inclusion proof has at most 63 hashes.
    static let maxProofHashes = 63

    /// The opaque extra data (the `extra` line); nil when the proof has none.
    public var extra: [UInt8]?
    /// The entry's zero-based index in the log.
    public var index: Int64
    /// The inclusion proof of the entry at `index` in the checkpoint's tree.
    public var proof: [MerkleTree.Hash]
    /// The signed checkpoint note (ending in its newline), cosignatures included.
    public var checkpoint: String

    public init(extra: [UInt8]?, index: Int64, proof: [MerkleTree.Hash], checkpoint: String) {
        self.extra = extra
        self.index = index
        self.proof = proof
        self.checkpoint = checkpoint
    }

    /// The proof's text (what `.tlog-proof` files hold).
    public var text: String {
        var out = Self.header + "\n"
        if let extra { out += "extra " + Base64.encode(extra) + "\n" }
        out += "index \(index)\n"
        for hash in proof { out += Base64.encode(hash) + "\n" }
        return out + "\n" + checkpoint
    }

    /// Parses a proof's text strictly: the header line; an `extra` line (standard base64) or
    /// none; `index` and a decimal without sign or leading zeroes (but `0`); at most 63 lines of
    /// one base64 SHA-256 hash each; an empty line; then a non-empty checkpoint, kept verbatim
    /// (its signatures are checked by whoever verifies, not here). A `NoteError` naming the
    /// line otherwise. Lines are cut at U+000A only, on the UTF-8 bytes: a CR stays in its line
    /// and makes it malformed.
    public init(text: String) throws {
        let bytes = Array(text.utf8)
        var at = 0
        /// The next line without its newline; a line the text ends inside is malformed.
        func line(_ what: String) throws -> String {
            guard let end = bytes[at...].firstIndex(of: 0x0A) else { throw NoteError("tlog-proof: the text ends before \(what)") }
            defer { at = end + 1 }
            return String(decoding: bytes[at..<end], as: UTF8.self)
        }
        guard try line("the header line") == Self.header else {
            throw NoteError("tlog-proof: the first line is not \(Self.header)")
        }
        var next = try line("the index line")
        var extra: [UInt8]?
        if next.hasPrefix("extra ") {
            guard let data = Base64.decode(String(next.dropFirst(6))) else {
                throw NoteError("tlog-proof: the extra line is not `extra` and standard base64")
            }
            extra = data
            next = try line("the index line")
        }
        guard next.hasPrefix("index "), let index = Tile.decimal(String(next.dropFirst(6))) else {
            throw NoteError("tlog-proof: expected `index` and a decimal without leading zeroes, got \(next.debugDescription)")
        }
        var proof: [MerkleTree.Hash] = []
        while true {
            let hashLine = try line("the empty line before the checkpoint")
            if hashLine.isEmpty { break }
            guard proof.count < Self.maxProofHashes else {
                throw NoteError("tlog-proof: more than \(Self.maxProofHashes) inclusion proof lines")
            }
            guard let hash = Base64.decode(hashLine), hash.count == 32 else {
                throw NoteError("tlog-proof: inclusion proof line \(proof.count + 1) is not one base64 SHA-256 hash")
            }
            proof.append(hash)
        }
        guard at < bytes.count else { throw NoteError("tlog-proof: no checkpoint after the empty line") }
        self.init(extra: extra, index: index, proof: proof, checkpoint: String(decoding: bytes[at...], as: UTF8.self))
    }

    /// Step 4 of the specification's verification: throws unless the proof binds `leafHash`
    /// (step 1, the application's: `MerkleTree.leafHash` of the entry it knows) at `index` to
    /// the root of `checkpoint`, which the caller opened from `self.checkpoint` (steps 2 and 3).
    public func verifyInclusion(leafHash: MerkleTree.Hash, checkpoint: Checkpoint) throws {
        try MerkleProof.verifyInclusion(
            leafIndex: index, treeSize: checkpoint.size, leafHash: leafHash, proof: proof, root: checkpoint.rootHash)
    }

    /// Steps 2 to 4 against a policy: the checkpoint signed by one of `policy`'s logs (its origin
    /// that log's name) and cosigned by the policy's quorum, then the inclusion of `leafHash`.
    /// Returns the checkpoint and the witnesses whose cosignatures verified.
    public func verify(leafHash: MerkleTree.Hash, policy: WitnessPolicy) throws -> (checkpoint: Checkpoint, cosigners: [String]) {
        let (checkpoint, cosigners) = try policy.verify(self.checkpoint)
        try verifyInclusion(leafHash: leafHash, checkpoint: checkpoint)
        return (checkpoint, cosigners)
    }
}
