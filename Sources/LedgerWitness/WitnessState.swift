import Foundation
import TransparencyLog

#if canImport(Glibc)
import Glibc
#endif

/// What a witness remembers (C2SP `tlog-witness`): per origin, the size and root of the latest
/// checkpoint it cosigned, in one JSON file under its data folder.
///
/// One request at a time, on a serial queue of its own: the size check against the record and
/// the record's replacement are one step, and the new record is on disk (written to a temporary
/// file, synced, renamed over the old one, the folder synced) before the cosignature is made, so
/// a witness killed at any point never cosigns a tree that does not extend one it cosigned. The
/// file I/O blocks that queue's thread, never the async tasks' threads.
public final class WitnessState: @unchecked Sendable {  // `records` is only touched on `queue`
    public struct Record: Codable, Equatable, Sendable {
        public var size: Int64
        public var root: String
    }

    let file: URL
    let logs: [String: [NoteVerifier]]
    let cosigner: Cosigner
    private let queue = DispatchQueue(label: "ledger.witness.state")
    private var records: [String: Record]

    /// `logs`: the verifier keys trusted for each origin.
    public init(directory: String, logs: [NoteVerifier], cosigner: Cosigner) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        file = URL(fileURLWithPath: directory).appendingPathComponent("witness-state.json")
        self.logs = Dictionary(grouping: logs, by: \.name)
        self.cosigner = cosigner
        if let data = FileManager.default.contents(atPath: file.path) {
            records = try JSONDecoder().decode([String: Record].self, from: data)
        } else {
            records = [:]
        }
    }

    public func record(_ origin: String) -> Record? { queue.sync { records[origin] } }

    /// Checks the request, records the new checkpoint durably, and returns the cosignature line;
    /// throws `AddCheckpoint.Refusal` (its status and text) otherwise.
    public func add(_ request: AddCheckpoint, now: UInt64 = UInt64(Date().timeIntervalSince1970)) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try self.addNow(request, now: now) }) }
        }
    }

    private func addNow(_ request: AddCheckpoint, now: UInt64) throws -> String {
        let latest = request.origin.flatMap { records[$0] }
        let (checkpoint, text) = try request.check(
            logs: logs, latest: latest.flatMap { record in Base64.decode(record.root).map { (record.size, $0) } })
        var next = records
        next[checkpoint.origin] = Record(size: checkpoint.size, root: Base64.encode(checkpoint.rootHash))
        try persist(next)
        records = next
        return try cosigner.cosign(text, time: now)
    }

    private func persist(_ next: [String: Record]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(next)
        let temporary = file.path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw AddCheckpoint.Refusal(500, "cannot write \(temporary): errno \(errno)") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0 else {
            close(fd)
            throw AddCheckpoint.Refusal(500, "cannot write \(temporary): errno \(errno)")
        }
        close(fd)
        guard rename(temporary, file.path) == 0 else { throw AddCheckpoint.Refusal(500, "cannot replace \(file.path): errno \(errno)") }
        let folder = open(file.deletingLastPathComponent().path, O_RDONLY)
        if folder >= 0 {
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
