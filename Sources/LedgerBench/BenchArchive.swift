import ArgumentParser
import Foundation
import LedgerBackup
import LedgerConfiguration
import LedgerPostgres
import Logging
import PostgresNIO

/// `ledger-bench append --archive`: a backup's WAL receiver beside the benchmark's cluster, as
/// `ledger backup` or Barman runs it (`pg_receivewal --synchronous` through a slot named
/// `ledger_backup_…`, which the replication gate counts, so checkpoints wait for its flush).
/// `async`: commits do not wait for it; `sync`: it is the synchronous standby (RPO 0).
enum BenchArchive: String, ExpressibleByArgument, CaseIterable, Sendable {
    case none, async, sync

    static let slot = BackupSlot.prefix + "_bench"

    /// Runs `body` with the receiver streaming (and acknowledging synchronously for `sync`);
    /// afterwards the receiver is stopped, its slot dropped and synchronous_standby_names reset.
    func around(_ settings: DatabaseSettings, client: PostgresClient, logger: Logger, _ body: () async throws -> Void) async throws {
        guard self != .none else { return try await body() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-archive-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = WALArchive(folder: folder)
        try FileManager.default.createDirectory(at: archive.wal, withIntermediateDirectories: true)
        try await WALArchive.ensureSlot(Self.slot, client: client, logger: logger)
        let receiver = try archive.startStreaming(
            of: settings, slot: Self.slot, binaries: try EmbeddedPostgres.binaries(preferring: Setting.pgBin.value()),
            log: folder.appendingPathComponent("receiver.log").path)
        do {
            // WALArchive's receiver connects as BackupSlot.applicationName.
            if self == .sync { try await setSynchronousStandbys(BackupSlot.applicationName, client: client) }
            let state = self == .sync ? "sync" : "async"
            let deadline = ContinuousClock.now + .seconds(30)
            while try await client.query(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = \(BackupSlot.applicationName)"
            )
            .decode(String.self).reduce(into: [String](), { $0.append($1) }) != [state] {
                guard ContinuousClock.now < deadline else {
                    throw ValidationError("the archive's receiver is not streaming (\(state)) after 30 s: see \(folder.path)/receiver.log")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            try await body()
        } catch {
            await stop(receiver, client: client, logger: logger)
            throw error
        }
        await stop(receiver, client: client, logger: logger)
    }

    private func stop(_ receiver: pid_t, client: PostgresClient, logger: Logger) async {
        if self == .sync { try? await setSynchronousStandbys(nil, client: client) }
        kill(receiver, SIGTERM)
        _ = await ProcessRunner.exit(of: receiver)
        _ = try? await WALArchive.dropSlot(Self.slot, client: client, logger: logger)
    }

    private func setSynchronousStandbys(_ names: String?, client: PostgresClient) async throws {
        if let names {
            try await client.query("ALTER SYSTEM SET synchronous_standby_names = '\(unescaped: names)'")
        } else {
            try await client.query("ALTER SYSTEM RESET synchronous_standby_names")
        }
        try await client.query("SELECT pg_reload_conf()")
    }
}
