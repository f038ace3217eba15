import Foundation
import Synchronization
import TransparencyLog

#if canImport(Glibc)
    import Glibc
#endif

/// What a witness remembers (C2SP `tlog-witness`): per origin, the size and root of the latest
/// checkpoint it cosigned, in one JSON file under its data folder.
///
/// One request at a time, on a serial queue of its own: the size check against the record and
/// the record's replacement are one step, and a new record is on disk (written to a temporary
/// file, synced, renamed over the old one, the folder synced) before the cosignature is made, so
/// a witness killed at any point never cosigns a tree that does not extend one it cosigned. The
/// file I/O blocks that queue's thread, never the async tasks' threads.
///
/// **Nothing written when nothing changed.** A checkpoint it already holds (same origin, size
/// and root: the public checkpoint replayed at it by anyone) is checked and cosigned again from
/// memory, with no disk I/O; `syncs` counts the syncs, so a test can say so.
///
/// **One process per folder.** The folder is locked (`flock` on `witness.lock`) for as long as
/// the state is open: two witnesses on one folder would each check against their own memory
/// and could cosign two trees that do not extend each other. A second one fails to open.
public final class WitnessState: @unchecked Sendable {  // `records` is only touched on `queue`
    public struct Record: Codable, Equatable, Sendable {
        public var size: Int64
        public var root: String
    }

    /// Another process (or another state in this one) holds the folder's lock.
    public struct FolderInUse: Error, CustomStringConvertible {
        public var directory: String
        public var description: String {
            "another witness is running on the data folder \(directory) (it holds \(directory)/\(WitnessState.lockName)): "
                + "stop it first, or give this one its own --data-dir"
        }
    }

    static let lockName = "witness.lock"
    static let stateName = "witness-state.json"

    let file: URL
    let logs: [String: [NoteVerifier]]
    let cosigner: Cosigner
    private let queue = DispatchQueue(label: "ledger.witness.state")
    private var records: [String: Record]
    /// The lock file's descriptor while the folder is held; -1 once released.
    private let lock: Mutex<Int32>
    private let syncCount = Atomic<Int>(0)

    /// `logs`: the verifier keys trusted for each origin. Throws `FolderInUse` if another
    /// witness holds `directory`.
    public init(directory: String, logs: [NoteVerifier], cosigner: Cosigner) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // The lock first: the records are read only by the witness that holds the folder.
        let fd = try WitnessState.lockFolder(directory)
        let stored: [String: Record]
        do {
            stored = try WitnessState.stored(directory: directory)
        } catch {
            _ = close(fd)
            throw error
        }
        lock = Mutex(fd)
        records = stored
        file = URL(fileURLWithPath: directory).appendingPathComponent(WitnessState.stateName)
        self.logs = Dictionary(grouping: logs, by: \.name)
        self.cosigner = cosigner
    }

    deinit { release() }

    /// The records in `directory`'s state file, read without taking the folder (for tests and
    /// tools beside a running witness: the file is replaced by a rename, so it is whole).
    public static func stored(directory: String) throws -> [String: Record] {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(stateName).path
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        return try JSONDecoder().decode([String: Record].self, from: data)
    }

    public func record(_ origin: String) -> Record? { queue.sync { records[origin] } }

    /// How many times it has synced a file or its folder to disk.
    public var syncs: Int { syncCount.load(ordering: .relaxed) }

    /// Gives the folder up (another witness may then open it); this state answers nothing after.
    public func release() {
        lock.withLock { fd in
            if fd >= 0 { _ = close(fd) }  // closing the descriptor releases the flock
            fd = -1
        }
    }

    /// Checks the request, records the new checkpoint durably if it is new, and returns the
    /// cosignature line; throws `AddCheckpoint.Refusal` (its status and text) otherwise.
    public func add(_ request: AddCheckpoint, now: UInt64 = UInt64(Date().timeIntervalSince1970)) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try self.addNow(request, now: now) }) }
        }
    }

    private func addNow(_ request: AddCheckpoint, now: UInt64) throws -> String {
        guard lock.withLock({ $0 >= 0 }) else { throw AddCheckpoint.Refusal(503, "the witness is stopping") }
        let latest = request.origin.flatMap { records[$0] }
        let (checkpoint, text) = try request.check(
            logs: logs, latest: latest.flatMap { record in Base64.decode(record.root).map { (record.size, $0) } })
        let record = Record(size: checkpoint.size, root: Base64.encode(checkpoint.rootHash))
        // A checkpoint it holds already (a replay) changes nothing: nothing to write.
        if records[checkpoint.origin] != record {
            var next = records
            next[checkpoint.origin] = record
            try persist(next)
            records = next
        }
        return try cosigner.cosign(text, time: now)
    }

    /// Takes `directory`'s lock file; its descriptor. Throws `FolderInUse` if it is held.
    private static func lockFolder(_ directory: String) throws -> Int32 {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(lockName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AddCheckpoint.Refusal(500, "cannot open \(path): errno \(errno)") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            _ = close(fd)
            if error == EAGAIN { throw FolderInUse(directory: directory) }  // EWOULDBLOCK, the same number
            throw AddCheckpoint.Refusal(500, "cannot lock \(path): errno \(error)")
        }
        return fd
    }

    private func persist(_ next: [String: Record]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(next)
        let temporary = file.path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw AddCheckpoint.Refusal(500, "cannot write \(temporary): errno \(errno)") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        _ = syncCount.add(1, ordering: .relaxed)
        guard written == data.count, fsync(fd) == 0 else {
            close(fd)
            throw AddCheckpoint.Refusal(500, "cannot write \(temporary): errno \(errno)")
        }
        close(fd)
        guard rename(temporary, file.path) == 0 else { throw AddCheckpoint.Refusal(500, "cannot replace \(file.path): errno \(errno)") }
        let folder = open(file.deletingLastPathComponent().path, O_RDONLY)
        if folder >= 0 {
            _ = syncCount.add(1, ordering: .relaxed)
            _ = fsync(folder)
            close(folder)
        }
    }
}

extension AddCheckpoint {
    /// The checkpoint's origin, if its note parses that far.
    var origin: String? {
        guard let text = try? SignedNote.parse(note).text else { return nil }
        return text.split(separator: "\n", maxSplits: 1).first.map(String.init)
    }
}
