import Foundation
import TransparencyLog

/// The latest checkpoint the checkpointer signed, kept outside the database
/// (`LEDGER_CHECKPOINT_FILE`): one of the records of its floor (`CheckpointFloor`).
///
/// Written when the checkpoint is signed, before it is stored, so before it is sent to any
/// witness or published: a checkpoint some witness cosigned, or one that was served, is never
/// past the file, even if the witnesses' quorum never forms. That is why it may hold a
/// checkpoint that was never published; it is the checkpointer's record, served nowhere. Never
/// replaced by a smaller checkpoint; a checkpoint of the same size replaces it (the same tree
/// with the witnesses' cosignatures, once published).
///
/// One file per log, on the checkpointer's durable disk (a volume in `docker-compose.yml`).
/// Where checkpointers on several hosts take the lease in turn, give them one file on shared
/// storage: each checks against the file it has, which an older one only makes weaker.
struct CheckpointFile {
    let url: URL

    /// The note in the file; nil when there is no file. Throws when it cannot be read.
    func read() throws -> String? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The checkpoint in the file; nil when there is no file. Throws unless it holds a signed
    /// checkpoint note.
    func checkpoint() throws -> Checkpoint? {
        guard let note = try read() else { return nil }
        return try Checkpoint(text: SignedNote.parse(note).text)
    }

    /// Replaces the file's note with `note` unless the file holds a larger checkpoint (written
    /// beside it, then renamed over it, so a crash leaves the old note or the new one).
    func write(_ note: String) throws {
        let size = try Checkpoint(text: SignedNote.parse(note).text).size
        if let last = try? checkpoint(), last.size > size { return }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(note.utf8).write(to: url, options: .atomic)
    }
}
