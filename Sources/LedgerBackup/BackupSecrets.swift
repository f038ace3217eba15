import Foundation
import LedgerConfiguration
import LedgerPostgres

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a backup folder holds beside the database (SPEC "A backup is not a key ring"):
/// - `published-checkpoint`: the latest published checkpoint, public, in the clear;
/// - `secrets/NAME.age`: the signing key, the JWT secret and the cluster's passwords, sealed with
///   age (c2sp.org/age, Debian's `age`) to the recipients the operator named, and only then;
/// - `backup.json`: where the checkpoint file and the signing key lived at backup time
///   (`LEDGER_CHECKPOINT_FILE`, `LEDGER_SIGNING_KEY_FILE`; null: the data folder). A restore
///   lays them there when its own settings name the same paths (the folder is not trusted to
///   choose where files are written), else in the data folder, saying where they were.
/// A restore never overwrites a file already in its place. Folders of earlier releases kept the
/// secrets in the clear in `secrets/NAME`: a backup into such a folder removes them, a restore
/// from one still lays them (saying so).
public struct BackupSecrets: Sendable {
    /// The secrets a ledger keeps in its data folder, or where its settings say.
    static let sealed = ["pg-password", "app-password", "jwt-secret", "log-signing-key"]
    static let checkpointName = "published-checkpoint"

    struct Manifest: Codable, Equatable {
        var checkpointFile: String?
        var signingKeyFile: String?
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let folder: URL

    public init(folder: URL) {
        self.folder = folder
    }

    public var secrets: URL { folder.appendingPathComponent("secrets") }
    var checkpoint: URL { folder.appendingPathComponent(Self.checkpointName) }
    var manifestFile: URL { folder.appendingPathComponent("backup.json") }

    /// Where `configuration` keeps each secret and its checkpoint file.
    static func sources(_ configuration: LedgerConfiguration) -> [String: URL] {
        var files = Dictionary(uniqueKeysWithValues: sealed.map { ($0, configuration.dataDirectory.appendingPathComponent($0)) })
        if let key = configuration.signingKeyFile { files["log-signing-key"] = Self.absolute(key) }
        files[checkpointName] = configuration.checkpointFileURL
        return files
    }

    static func absolute(_ path: String) -> URL {
        URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
    }

    static func age() throws -> String {
        guard let age = ProcessRunner.which("age") else {
            throw Failure(description: "age is not installed (Debian: apt-get install age); it seals the backup's secrets")
        }
        return age
    }

    /// The clear copies an earlier release kept in `secrets/` (and its half-written ones).
    var legacy: [URL] {
        (Self.sealed + [Self.checkpointName]).flatMap {
            [secrets.appendingPathComponent($0), secrets.appendingPathComponent(".\($0).new")]
        }
        .filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// Writes the manifest, removes the clear copies an earlier release kept (`removed`), then
    /// seals each secret that exists to `recipients` (none: `outside` names the secrets the
    /// operator must keep elsewhere; what an earlier run sealed stays).
    public func keep(_ configuration: LedgerConfiguration, recipients: [String]) async throws -> (outside: [URL], removed: [URL]) {
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let manifest = Manifest(
            checkpointFile: configuration.checkpointFile.map { Self.absolute($0).path },
            signingKeyFile: configuration.signingKeyFile.map { Self.absolute($0).path })
        try Self.replace(manifestFile, with: try JSONEncoder().encode(manifest), mode: 0o644)
        let removed = legacy
        for file in removed { try FileManager.default.removeItem(at: file) }
        let sources = Self.sources(configuration)
        let present = Self.sealed.compactMap { name in
            sources[name].flatMap { FileManager.default.fileExists(atPath: $0.path) ? (name, $0) : nil }
        }
        guard !recipients.isEmpty else { return (present.map(\.1), removed) }
        let age = try Self.age()
        for (name, source) in present {
            let target = secrets.appendingPathComponent(name + ".age")
            let aside = secrets.appendingPathComponent(".\(name).age.new")
            try? FileManager.default.removeItem(at: aside)
            do {
                try await ProcessRunner.check(age, recipients.flatMap { ["-r", $0] } + ["-o", aside.path, source.path])
            } catch let failure as ProcessRunner.Failure {
                throw Failure(description: "age could not seal \(name): \(failure.output.trimmingCharacters(in: .whitespacesAndNewlines))")
            }
            try Self.move(aside, target)
        }
        return ([], removed)
    }

    /// Copies the checkpoint file (public) into the folder, when it changed.
    public func keepCheckpoint(from file: URL) throws {
        guard let data = FileManager.default.contents(atPath: file.path), FileManager.default.contents(atPath: checkpoint.path) != data
        else { return }
        try Self.replace(checkpoint, with: data, mode: 0o644)
    }

    /// Lays the checkpoint and the secrets where the restoring ledger looks for them
    /// (`configuration`: its data folder, `LEDGER_CHECKPOINT_FILE`, `LEDGER_SIGNING_KEY_FILE`),
    /// opening sealed ones with `identity`; a file already there is kept. Everything is opened
    /// before anything is laid: a wrong identity changes nothing. Returns what it did, a line each.
    public func restore(into configuration: LedgerConfiguration, identity: String?) async throws -> [String] {
        let fm = FileManager.default
        let dataDirectory = configuration.dataDirectory
        let manifest = (fm.contents(atPath: manifestFile.path)).flatMap { try? JSONDecoder().decode(Manifest.self, from: $0) } ?? Manifest()
        var lines: [String] = []
        let wanted = Self.sources(configuration)
        // Where the backed-up ledger kept a file, honoured only where this one's settings say the same.
        for (name, kept) in [(Self.checkpointName, manifest.checkpointFile), ("log-signing-key", manifest.signingKeyFile)] {
            if let kept, wanted[name]?.path != kept {
                lines.append("restore: the backed-up ledger kept \(name) at \(kept); set its setting to that path to restore it there")
            }
        }
        func place(_ name: String) -> URL { wanted[name] ?? dataDirectory.appendingPathComponent(name) }
        try fm.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let opened = dataDirectory.appendingPathComponent(".restore-\(UUID().uuidString.prefix(8))")
        try fm.createDirectory(at: opened, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? fm.removeItem(at: opened) }
        let oldCheckpoint = secrets.appendingPathComponent(Self.checkpointName)
        var files: [(name: String, data: URL)] =
            fm.fileExists(atPath: checkpoint.path)
            ? [(Self.checkpointName, checkpoint)]
            : fm.fileExists(atPath: oldCheckpoint.path) ? [(Self.checkpointName, oldCheckpoint)] : []
        let sealedHere = Self.sealed.filter { fm.fileExists(atPath: secrets.appendingPathComponent($0 + ".age").path) }
        for name in Self.sealed where !sealedHere.contains(name) && fm.fileExists(atPath: secrets.appendingPathComponent(name).path) {
            files.append((name, secrets.appendingPathComponent(name)))
            lines.append("restore: \(name) was kept in the clear by an earlier release; destroy this folder's copy once restored")
        }
        if let identity, !sealedHere.isEmpty {
            let age = try Self.age()
            for name in sealedHere {
                let out = opened.appendingPathComponent(name)
                do {
                    try await ProcessRunner.check(
                        age, ["-d", "-i", identity, "-o", out.path, secrets.appendingPathComponent(name + ".age").path])
                } catch let failure as ProcessRunner.Failure {
                    throw Failure(
                        description:
                            "age could not open \(name) with \(identity): \(failure.output.trimmingCharacters(in: .whitespacesAndNewlines))"
                    )
                }
                files.append((name, out))
            }
        } else if !sealedHere.isEmpty {
            lines.append(
                "restore: \(sealedHere.joined(separator: ", ")) are sealed in \(secrets.path); pass --identity FILE to open them, or put them in place yourself"
            )
        } else if files.count <= 1 {
            lines.append(
                "restore: the backup holds no secrets; put \(Self.sealed.map { place($0).path }.joined(separator: ", ")) in place from where you keep them"
            )
        }
        for (name, source) in files {
            let target = place(name)
            guard !fm.fileExists(atPath: target.path) else {
                lines.append("restore: kept \(target.path) (a file was there; nothing is overwritten)")
                continue
            }
            try fm.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.create(target, with: try Data(contentsOf: source), mode: name == Self.checkpointName ? 0o644 : 0o600)
            lines.append("restore: \(name) laid at \(target.path)")
        }
        return lines
    }

    // MARK: Files

    /// Writes `data` aside and renames it over `file`: the folder's own files, replaced whole.
    static func replace(_ file: URL, with data: Data, mode: Int) throws {
        let aside = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).new")
        guard FileManager.default.createFile(atPath: aside.path, contents: data, attributes: [.posixPermissions: mode]) else {
            throw Failure(description: "cannot write \(aside.path)")
        }
        try move(aside, file)
    }

    static func move(_ from: URL, _ to: URL) throws {
        guard rename(from.path, to.path) == 0 else {
            throw Failure(description: "cannot write \(to.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Creates `file` whole, only if nothing is there: written aside and flushed, then linked into
    /// place (`link` refuses an existing name), so a restore never overwrites and never leaves a
    /// part of a file behind.
    static func create(_ file: URL, with data: Data, mode: Int) throws {
        let aside = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString.prefix(8))")
        let fd = open(aside.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode_t(mode))
        guard fd >= 0 else { throw Failure(description: "cannot create \(aside.path): \(String(cString: strerror(errno)))") }
        defer { unlink(aside.path) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced else { throw Failure(description: "cannot write \(file.path)") }
        guard link(aside.path, file.path) == 0 else {
            throw Failure(description: "cannot create \(file.path): \(String(cString: strerror(errno)))")
        }
    }
}
