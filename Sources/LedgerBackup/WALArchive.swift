import Foundation
import LedgerPostgres
import Logging
import PostgresNIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A backup folder's database (SPEC "Backups and recovery"): a base backup of the cluster in
/// `base/` (`pg_basebackup`) and its WAL from then on in `wal/` (`pg_receivewal`). What the
/// ledger keeps beside it (its checkpoint, its secrets sealed or left out) is `BackupSecrets`.
///
/// Both streams go through one physical replication slot (`BackupSlot`). The primary keeps every
/// WAL segment the folder has not flushed, and the checkpointer's replication gate counts the
/// slot like a standby's (`ReplicationGate`, in every mode), so no checkpoint covers an event
/// whose WAL the folder lacks: a restore of the folder extends every published checkpoint. A
/// stopped stream keeps its slot, so checkpoints wait for it (and WAL piles up on the primary)
/// until it streams again or the slot is dropped (`dropSlot`).
public struct WALArchive: Sendable {

    public let folder: URL
    public var base: URL { folder.appendingPathComponent("base") }
    public var wal: URL { folder.appendingPathComponent("wal") }

    public init(folder: URL) {
        self.folder = folder
    }

    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    // MARK: Taking one

    /// The slot, made unless it exists, reserving WAL from now on.
    public static func ensureSlot(_ name: String, client: PostgresClient, logger: Logger) async throws {
        let rows = try await client.query(
            """
            SELECT pg_create_physical_replication_slot(\(name), true)
            WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = \(name))
            """, logger: logger)
        for try await _ in rows {}
    }

    /// Drops the slot and the ledger's record of how far it flushed (`BackupPositions`): backups
    /// end, checkpoints no longer wait for it. False if there was neither.
    public static func dropSlot(_ name: String, client: PostgresClient, logger: Logger) async throws -> Bool {
        let rows = try await client.query(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = \(name)", logger: logger)
        var dropped = false
        for try await _ in rows { dropped = true }
        return try await BackupPositions.forget(name, client: client, logger: logger) || dropped
    }

    /// A base backup into `base/` (refused where one is already): a fast checkpoint, the WAL
    /// it needs streamed through `slot`; pg_basebackup's progress on `progress` (a terminal).
    public func takeBase(of server: DatabaseSettings, slot: String, binaries: String, progress: String?) async throws {
        let fm = FileManager.default
        if fm.fileExists(atPath: base.appendingPathComponent("PG_VERSION").path) {
            throw Refusal(description: "\(folder.path) already holds a base backup; back up into a new folder")
        }
        for dir in [folder, wal] {
            try fm.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let arguments =
            ["-D", base.path, "-X", "stream", "-S", slot, "--checkpoint=fast"] + Self.connection(server)
            + (progress != nil ? ["-P"] : [])
        let log = folder.appendingPathComponent("pg_basebackup.log").path
        let pid = try ProcessRunner.launch(
            binaries + "/pg_basebackup", arguments, environment: Self.environment(server), outputPath: log, errorPath: progress)
        let status = await ProcessRunner.exit(of: pid)
        guard status == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw Refusal(
                description: "pg_basebackup exited with status \(status): \(output.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// `pg_receivewal` into `wal/` through `slot`, flushing each write before it reports it
    /// (`--synchronous`), reconnecting by itself when the server goes away; its output in `log`.
    /// Returns its process id (stop it with SIGTERM).
    public func startStreaming(of server: DatabaseSettings, slot: String, binaries: String, log: String) throws -> pid_t {
        try ProcessRunner.launch(
            binaries + "/pg_receivewal", ["-D", wal.path, "-S", slot, "--synchronous", "--no-password"] + Self.connection(server),
            environment: Self.environment(server), outputPath: log)
    }

    // MARK: Restoring

    /// Lays the backup out as the embedded cluster of `dataDirectory` (which must hold none):
    /// `base/` as its `pg/`, then every WAL segment of `wal/` in its `pg_wal` (the one being
    /// written, `.partial`, under its own name), so the first start replays them up to the last
    /// record the archive flushed. Returns how many segments it laid.
    public func restore(into dataDirectory: URL) throws -> Int {
        let fm = FileManager.default
        let cluster = dataDirectory.appendingPathComponent("pg")
        guard fm.fileExists(atPath: base.appendingPathComponent("PG_VERSION").path) else {
            throw Refusal(description: "\(folder.path) holds no base backup (no base/PG_VERSION)")
        }
        if fm.fileExists(atPath: cluster.path) {
            throw Refusal(description: "\(cluster.path) exists: restore into a data folder without a cluster (nothing is overwritten)")
        }
        try fm.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        try fm.copyItem(at: base, to: cluster)
        let names = try fm.contentsOfDirectory(atPath: wal.path)
        // The first start replays pg_wal as crash recovery, on one timeline: an archive that
        // crossed a promotion (a .history file) needs PostgreSQL's archive recovery instead.
        if let history = names.first(where: { $0.hasSuffix(".history") }) {
            try? fm.removeItem(at: cluster)
            throw Refusal(
                description:
                    "\(wal.path) crosses a timeline switch (\(history)): restore it with restore_command and recovery.signal (PostgreSQL's point-in-time recovery)"
            )
        }
        let pgWAL = cluster.appendingPathComponent("pg_wal")
        var laid = 0
        for name in names.sorted() {
            let segment = name.hasSuffix(".partial") ? String(name.dropLast(".partial".count)) : name
            // Segment files only (24 hex digits); not pg_receivewal's temporaries. A full segment
            // wins over a .partial of the same name (left by a stream that stopped mid-segment).
            guard segment.count == 24, segment.allSatisfy(\.isHexDigit) else { continue }
            if name != segment, names.contains(segment) { continue }
            let target = pgWAL.appendingPathComponent(segment)
            try? fm.removeItem(at: target)  // the base's copy of a segment the archive holds further
            try fm.copyItem(at: wal.appendingPathComponent(name), to: target)
            laid += 1
        }
        try? fm.removeItem(at: cluster.appendingPathComponent("postmaster.pid"))
        return laid
    }

    // MARK: Plumbing

    static func connection(_ server: DatabaseSettings) -> [String] {
        ["-h", server.host, "-p", "\(server.port)", "-U", server.username]
    }

    static func environment(_ server: DatabaseSettings) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PGPASSWORD"] = server.password
        environment["PGAPPNAME"] = BackupSlot.applicationName
        environment["LC_ALL"] = "C"
        return environment
    }
}
