import ArgumentParser
import Foundation
import LedgerBackup
import LedgerConfiguration
import LedgerPostgres
import Logging
import PostgresNIO
import Synchronization

/// `ledger-bench scale`'s backup and restore, as `ledger backup` and `ledger restore` make them:
/// a base backup through a backup slot (`WALArchive.takeBase`), then the folder laid out as a
/// fresh data folder's cluster (`WALArchive.restore`), started (recovery replays its WAL) and
/// asked for the log's head, which must be the head backed up. Both folders are deleted after.
/// Where the disk has no room for the restore beside the bench's cluster and the backup, the
/// restore waits until the bench's cluster is gone.
struct ScaleBackup {
    /// The bench database; the backup is of its whole cluster.
    let settings: DatabaseSettings
    let logger: Logger

    static let slot = BackupSlot.prefix + "_scale"

    /// The folders of backups whose restore waits: deleted by `removeAll` whatever happened.
    final class Deferred: Sendable {
        private let folders = Mutex<[URL]>([])
        func add(_ folder: URL) { folders.withLock { $0.append(folder) } }
        func removeAll() {
            for folder in folders.withLock({ $0 }) { try? FileManager.default.removeItem(at: folder) }
        }
    }

    /// A base backup taken, not yet restored: its folder, the log's head it holds, and its size
    /// on disk.
    struct Taken: Sendable {
        var archive: WALArchive
        var head: Int64
        var bytes: Int64
    }

    /// Takes a base backup into a temporary folder and returns it with how long it took.
    func backup() async throws -> (Taken, Duration) {
        let archive = WALArchive(
            folder: FileManager.default.temporaryDirectory.appendingPathComponent("ledger-scale-backup-\(UUID().uuidString.prefix(8))"))
        let binaries = try EmbeddedPostgres.binaries(preferring: Setting.pgBin.value())
        // No write runs meanwhile, so the head read now is the head the backup holds. A slot left
        // by a killed run (on a --database-url) is dropped first: it would hold checkpoints back.
        let head: Int64
        let started: ContinuousClock.Instant
        do {
            try await dropSlot()
            head = try await settings.withClient(logger: logger) { client in
                try await WALArchive.ensureSlot(Self.slot, client: client, logger: logger)
                return try await Self.head(client)
            }
            started = ContinuousClock.now
            try await archive.takeBase(of: settings, slot: Self.slot, binaries: binaries, progress: nil)
        } catch {
            try? FileManager.default.removeItem(at: archive.folder)
            try? await dropSlot()
            throw error
        }
        let took = ContinuousClock.now - started
        // A slot left behind would hold the checkpointer back (it waits for a backup's flush).
        try await dropSlot()
        return (Taken(archive: archive, head: head, bytes: Self.bytes(under: archive.folder)), took)
    }

    /// Restores `taken` as a fresh data folder's cluster, starts it, checks its head, and
    /// returns how long that took; both folders are deleted after.
    static func restore(_ taken: Taken, username: String, password: String?, database: String, logger: Logger) async throws -> Duration {
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-scale-restore-\(UUID().uuidString.prefix(8))")
        defer {
            try? FileManager.default.removeItem(at: taken.archive.folder)
            try? FileManager.default.removeItem(at: target)
        }
        let binaries = try EmbeddedPostgres.binaries(preferring: Setting.pgBin.value())
        let started = ContinuousClock.now
        _ = try taken.archive.restore(into: target)
        _ = FileManager.default.createFile(
            atPath: target.appendingPathComponent("pg-password").path, contents: Data((password ?? "").utf8),
            attributes: [.posixPermissions: 0o600])
        let cluster = EmbeddedPostgres(
            options: .init(dataDirectory: target, username: username, database: database, binaries: binaries), logger: logger)
        let restored = try await cluster.start()
        return try await stopping(cluster) {
            let head = try await restored.withClient(logger: logger) { try await Self.head($0) }
            let took = ContinuousClock.now - started
            guard head == taken.head else { throw ValidationError("the restored log's head is \(head), not \(taken.head)") }
            return took
        }
    }

    /// Whether the temporary folder's disk has room for a restore of `taken` beside it (its
    /// size again, and 2 GB to spare).
    static func roomToRestore(_ taken: Taken) -> Bool {
        let free =
            (try? FileManager.default.attributesOfFileSystem(forPath: FileManager.default.temporaryDirectory.path))?[
                .systemFreeSize] as? Int64
        return (free ?? 0) > taken.bytes + 2_000_000_000
    }

    private static func bytes(under folder: URL) -> Int64 {
        var total: Int64 = 0
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])
        while let file = files?.nextObject() as? URL {
            total += Int64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        return total
    }

    private func dropSlot() async throws {
        _ = try await settings.withClient(logger: logger) { try await WALArchive.dropSlot(Self.slot, client: $0, logger: logger) }
    }

    private static func head(_ client: PostgresClient) async throws -> Int64 {
        var head: Int64 = 0
        for try await value in try await client.query("SELECT coalesce(max(position), 0)::int8 FROM ledger_events").decode(Int64.self) {
            head = value
        }
        return head
    }
}
