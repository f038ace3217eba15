import Foundation
import Logging
import Metrics
import TransparencyLog

/// The last checkpoint the checkpointer published, kept outside the database (SPEC "High
/// availability"): a file holding its note. Before it signs, the checkpointer checks that its
/// tree extends this checkpoint; a database that lost or rewrote published events (a failover
/// to a standby that lacked them, a restored backup, a hand edit) gives a tree that does not,
/// and signing it would fork the log under its key. Then it refuses: it logs why, counts the
/// refusal in `ledger_checkpoint_fork_refusals_total` (alert `LedgerCheckpointForkRefused`) and
/// signs nothing until an operator acts (docs/OPERATIONS.md, "Failover").
struct LastPublishedCheckpoint {
    let file: URL
    let origin: String
    let tree: LogTree
    let logger: Logger

    static let refusals = "ledger_checkpoint_fork_refusals_total"
    /// How long a refusal stands before the checkpointer looks again (appends do not wake it).
    static let retry: Duration = .seconds(10)

    /// The checkpoint in the file; nil when there is none yet.
    func read() throws -> Checkpoint? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let note = try String(contentsOf: file, encoding: .utf8)
        return try Checkpoint(text: SignedNote.parse(note).text)
    }

    /// Replaces the file's note with `note` (written beside it, then renamed over it, so a
    /// crash leaves the old note or the new one, never half of one).
    func write(_ note: String) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(note.utf8).write(to: file, options: .atomic)
    }

    /// Throws, after logging and counting the refusal, unless the tree of `size` with `root`
    /// extends the file's checkpoint: same origin, at least as large, and the stored tree's
    /// root at the file's size is the file's root.
    func checkExtended(size: Int64, root: MerkleTree.Hash) async throws {
        guard let last = try read() else { return }
        var problem: String?
        if last.origin != origin {
            problem = "\(file.path) holds a checkpoint of the log \(last.origin), not of \(origin)"
        } else if size < last.size {
            problem = "the log holds \(size) events, fewer than the \(last.size) of the last published checkpoint: published events are missing"
        } else if last.size > 0 {
            let stored = size == last.size ? root : try await tree.hashes(of: [0 ..< last.size])[0]
            if stored != last.rootHash {
                problem = "the log's first \(last.size) events do not give the root of the last published checkpoint: they differ from the published ones"
            }
        }
        guard let problem else { return }
        Counter(label: Self.refusals).increment()
        logger.critical(
            "checkpointer: refusing to sign a tree that does not extend the last published checkpoint (a fork)",
            metadata: ["why": "\(problem)", "published": "\(last.size)", "file": "\(file.path)"])
        throw ForkRefusal(description: "not signing: \(problem)")
    }
}

/// The checkpointer's refusal to sign a tree that would fork the log; it tries again after
/// `LastPublishedCheckpoint.retry`, in case an operator restored the missing events.
public struct ForkRefusal: Error, CustomStringConvertible {
    public var description: String
}
