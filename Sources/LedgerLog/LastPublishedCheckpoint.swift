import Foundation
import Logging
import TransparencyLog

/// The last checkpoint the checkpointer published, kept outside the database (SPEC "High
/// availability"): a file holding its note, written before the checkpoint is published (so the
/// file is never behind what was served) and never replaced by a smaller one. Before its first
/// signature the checkpointer checks that its tree extends this checkpoint; a database that lost
/// or rewrote published events (a failover to a standby that lacked them, a restored backup, a
/// hand edit) gives a tree that does not, and signing it would fork the log: a `ForkRefusal`.
///
/// One file per log, on the checkpointer's durable disk. Where checkpointers on several hosts
/// take the lease in turn, give them one file on shared storage: each checks against the file
/// it has, which an older one only makes weaker.
struct LastPublishedCheckpoint {
    let file: URL
    let origin: String
    let tree: LogTree
    let logger: Logger

    /// The checkpoint in the file; nil when there is none yet.
    func read() throws -> Checkpoint? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let note = try String(contentsOf: file, encoding: .utf8)
        return try Checkpoint(text: SignedNote.parse(note).text)
    }

    /// Replaces the file's note with `note` unless the file holds a larger checkpoint (written
    /// beside it, then renamed over it, so a crash leaves the old note or the new one).
    func write(_ note: String) throws {
        let size = try Checkpoint(text: SignedNote.parse(note).text).size
        if let last = try? read(), last.size > size { return }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(note.utf8).write(to: file, options: .atomic)
    }

    /// Throws a `ForkRefusal` unless the tree of `size` with `root` extends the file's
    /// checkpoint: same origin, at least as large, and the stored tree's root at the file's size
    /// is the file's root. A file that cannot be read is refused too.
    func checkExtended(size: Int64, root: MerkleTree.Hash) async throws {
        let metadata: Logger.Metadata = ["file": "\(file.path)"]
        let last: Checkpoint
        do {
            guard let read = try read() else {
                if let published = try await tree.latestCheckpoint() {
                    logger.warning(
                        "checkpointer: no last published checkpoint in the file, though the database has published one; checking from the next one",
                        metadata: ["file": "\(file.path)", "published": "\(published.size)"])
                }
                return
            }
            last = read
        } catch {
            throw ForkRefusal.refuse("\(file.path) does not hold a checkpoint: \(error)", logger: logger, metadata: metadata)
        }
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
        if let problem {
            throw ForkRefusal.refuse(problem, logger: logger, metadata: metadata.merging(["published": "\(last.size)"]) { $1 })
        }
    }
}
