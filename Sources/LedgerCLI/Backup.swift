import ArgumentParser
import Foundation
import LedgerBackup
import LedgerConfiguration
import LedgerPostgres
import LedgerTelemetry
import Logging
import UnixSignals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `ledger backup --to DIR`: a base backup of the embedded cluster (or of `--database-url`),
/// then its WAL streamed into DIR through a replication slot until stopped (`WALArchive`).
/// The checkpointer counts the slot like a standby, so every published checkpoint is covered by
/// what DIR holds, and `ledger restore --from DIR` on another machine extends them all. Beside
/// the database: the published checkpoint in the clear, and the secrets only sealed to the
/// `--recipient`s (`BackupSecrets`).
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Back up the ledger's database into a folder: a base backup, then its WAL streamed through a replication slot until stopped (Ctrl-C or SIGTERM).",
        discussion: """
            Run it again with the same folder to resume the stream (the slot kept every WAL segment since). While the \
            slot exists, checkpoints cover only what the folder flushed: a stopped backup delays them, it never forks \
            them. `ledger backup --drop-slot` ends backups. Put the folder on another disk than the data folder. \
            The signing key, the JWT secret and the cluster's passwords go into the folder only sealed with age to \
            the --recipient keys (age-keygen makes one); without recipients they stay out, and you keep them elsewhere.
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(name: .long, help: "The backup folder (created; a folder with a base backup resumes its WAL stream).")
    var to: String?

    @Option(
        name: .long,
        help: "The physical replication slot the backup streams through: ledger_backup, or ledger_backup_<name> for more than one backup.")
    var slot: String = BackupSlot.prefix

    @Flag(name: .long, help: "Drop the slot and exit: backups end, checkpoints no longer wait for them.")
    var dropSlot = false

    @Option(
        name: .long, help: "An age recipient (age1…) the secrets are sealed to; repeatable. Without one the secrets stay out of the folder."
    )
    var recipient: [String] = []

    @Flag(
        name: .long, help: "Seal only the secrets into the folder, and exit: no database is reached (beside a backup tool such as Barman).")
    var secretsOnly = false

    func validate() throws {
        guard dropSlot || to != nil else { throw ValidationError("--to DIR is required (or --drop-slot)") }
        guard !secretsOnly || !recipient.isEmpty else { throw ValidationError("--secrets-only seals the secrets: name a --recipient") }
        // The checkpointer's gate knows a backup's slot by its name, whatever the replication mode.
        guard BackupSlot.isBackup(slot) else {
            throw ValidationError("--slot must be \(BackupSlot.prefix) or \(BackupSlot.prefix)_<name> (lower-case letters, digits, _)")
        }
    }

    func run() async throws {
        let configuration = try database.configuration()
        let logger = Logs.bootstrap(configuration)
        let archive = to.map { WALArchive(folder: URL(fileURLWithPath: $0).standardizedFileURL) }
        let kept = archive.map { BackupSecrets(folder: $0.folder) }
        if let kept, !dropSlot {
            // The secrets first, before any database is reached: a bad recipient is refused before anything else is made.
            let (outside, removed) = try await kept.keep(configuration, recipients: recipient)
            for file in removed { say("backup: removed \(file.path), a secret an earlier release kept in the clear") }
            if recipient.isEmpty {
                say(
                    "backup: no --recipient, so no secret is in \(kept.folder.path); keep these elsewhere (a restore needs them): "
                        + outside.map(\.path).joined(separator: ", "))
            } else {
                say("backup: the secrets sealed with age to \(recipient.count) recipient(s) in \(kept.secrets.path)")
            }
            if secretsOnly { return }
        }
        let (server, embedded) = try await configuration.connect(logger: logger)
        try await stopping(embedded) {
            if dropSlot {
                let dropped = try await server.withClient(logger: logger) {
                    try await WALArchive.dropSlot(slot, client: $0, logger: logger)
                }
                say(dropped ? "backup: slot \(slot) dropped; checkpoints no longer wait for a backup" : "backup: no slot \(slot)")
                return
            }
            guard let archive, let kept else { return }
            try kept.keepCheckpoint(from: configuration.checkpointFileURL)
            let binaries = try EmbeddedPostgres.binaries(preferring: configuration.pgBin)
            try await server.withClient(logger: logger) { try await WALArchive.ensureSlot(slot, client: $0, logger: logger) }
            if FileManager.default.fileExists(atPath: archive.base.appendingPathComponent("PG_VERSION").path) {
                say("backup: \(archive.base.path) holds a base backup; resuming the WAL stream")
            } else {
                let started = ContinuousClock.now
                try await archive.takeBase(of: server, slot: slot, binaries: binaries, progress: isatty(2) != 0 ? "/dev/stderr" : nil)
                say("backup: base backup in \(archive.base.path) (\(ContinuousClock.now - started))")
            }
            try await stream(archive, server: server, binaries: binaries, checkpoint: configuration.checkpointFileURL, logger: logger)
        }
    }

    /// Streams until SIGINT or SIGTERM, keeping the checkpoint file (it changes with each
    /// checkpoint) copied every second; pg_receivewal is started again if it exits.
    private func stream(
        _ archive: WALArchive, server: DatabaseSettings, binaries: String, checkpoint: URL, logger: Logger
    ) async throws {
        let kept = BackupSecrets(folder: archive.folder)
        let log = archive.folder.appendingPathComponent("pg_receivewal.log").path
        say("backup: streaming WAL into \(archive.wal.path) through slot \(slot); stop with Ctrl-C (the slot stays)")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { return }
            }
            group.addTask {
                while !Task.isCancelled {
                    let pid = try archive.startStreaming(of: server, slot: slot, binaries: binaries, log: log)
                    let status = await withTaskCancellationHandler {
                        await ProcessRunner.exit(of: pid)
                    } onCancel: {
                        kill(pid, SIGTERM)  // pg_receivewal flushes what it received and exits
                    }
                    // Ctrl-C reaches pg_receivewal too: the signal's task cancels this one within the second.
                    try await Task.sleep(for: .seconds(1))
                    logger.warning("pg_receivewal exited; starting it again", metadata: ["status": "\(status)", "log": "\(log)"])
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? kept.keepCheckpoint(from: checkpoint)
                    try await Task.sleep(for: .seconds(1))
                }
            }
            _ = try await group.next()  // a signal
            group.cancelAll()
        }
        try? kept.keepCheckpoint(from: checkpoint)
        say("backup: stopped; \(archive.folder.path) holds what was flushed")
    }
}

/// `ledger restore --from DIR --data-dir D`: lays a backup out as D's embedded cluster, for
/// `ledger serve --data-dir D`, whose first start replays the archived WAL; the checkpoint and
/// (with `--identity`) the sealed secrets where the backed-up ledger kept them, never over a file.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a `ledger backup` folder as a data folder's embedded cluster (replayed at the next `ledger serve`).")

    @Option(name: .long, help: "The backup folder.")
    var from: String

    @Option(name: .long, help: "The data folder to restore into (it must hold no cluster).")
    var dataDir: String

    @Option(name: .long, help: "An age identity file that opens the backup's sealed secrets.")
    var identity: String?

    @Flag(
        name: .long, help: "Lay only the secrets (and a checkpoint the folder holds), not the database (a folder made with --secrets-only)."
    )
    var secretsOnly = false

    func run() async throws {
        let archive = WALArchive(folder: URL(fileURLWithPath: from).standardizedFileURL)
        let target = URL(fileURLWithPath: dataDir).standardizedFileURL
        let started = ContinuousClock.now
        if !secretsOnly, FileManager.default.fileExists(atPath: target.appendingPathComponent("pg").path) {
            throw ValidationError("\(target.path)/pg exists: restore into a data folder without a cluster (nothing is overwritten)")
        }
        // The secrets first: one that cannot be opened stops the restore before the database is laid.
        var configuration = try loadConfiguration()
        configuration.dataDir = target.path
        do {
            for line in try await BackupSecrets(folder: archive.folder).restore(into: configuration, identity: identity) { say(line) }
        } catch let failure as BackupSecrets.Failure {
            throw ValidationError(failure.description)
        }
        if secretsOnly { return }
        let segments: Int
        do {
            segments = try archive.restore(into: target)
        } catch let refusal as WALArchive.Refusal {
            throw ValidationError(refusal.description)
        }
        say(
            """
            restore: the base backup and \(segments) WAL segments laid out in \(target.path)/pg (\(ContinuousClock.now - started))
            start it with `ledger serve --data-dir \(dataDir)`: PostgreSQL replays the WAL to the last record the backup flushed, and
            the checkpointer signs nothing before it has checked that the restored log extends the checkpoint file, the
            database's own records and the witnesses; start a new backup (`ledger backup --to NEW_DIR`) once it serves
            """)
    }
}

/// A line on stdout at once (a pipe or file would otherwise hold it until exit).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
