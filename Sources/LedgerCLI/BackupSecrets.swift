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
///   (`LEDGER_CHECKPOINT_FILE`, `LEDGER_SIGNING_KEY_FILE`; null: the data folder), so a restore
///   lays them where the ledger looks for them.
/// A restore never overwrites a file already in its place.
struct BackupSecrets {
    /// The secrets a ledger keeps in its data folder, or where its settings say.
    static let sealed = ["pg-password", "app-password", "jwt-secret", "log-signing-key"]
    static let checkpointName = "published-checkpoint"

    struct Manifest: Codable, Equatable {
        var checkpointFile: String?
        var signingKeyFile: String?
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let folder: URL
    var secrets: URL { folder.appendingPathComponent("secrets") }
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

    /// Writes the manifest, then seals each secret that exists to `recipients` (none: removes
    /// any sealed copy and returns the secrets the operator must keep elsewhere).
    func keep(_ configuration: LedgerConfiguration, recipients: [String]) async throws -> [URL] {
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let manifest = Manifest(
            checkpointFile: configuration.checkpointFile.map { Self.absolute($0).path },
            signingKeyFile: configuration.signingKeyFile.map { Self.absolute($0).path })
        try Self.replace(manifestFile, with: try JSONEncoder().encode(manifest), mode: 0o644)
        let sources = Self.sources(configuration)
        let present = Self.sealed.compactMap { name in sources[name].flatMap { FileManager.default.fileExists(atPath: $0.path) ? (name, $0) : nil } }
        guard !recipients.isEmpty else {
            for name in Self.sealed { try? FileManager.default.removeItem(at: secrets.appendingPathComponent(name + ".age")) }
            return present.map(\.1)
        }
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
        return []
    }

    /// Copies the checkpoint file (public) into the folder, when it changed.
    func keepCheckpoint(from file: URL) throws {
        guard let data = FileManager.default.contents(atPath: file.path), FileManager.default.contents(atPath: checkpoint.path) != data
        else { return }
        try Self.replace(checkpoint, with: data, mode: 0o644)
    }

    /// Lays the checkpoint and the secrets where the backed-up ledger kept them (the manifest's
    /// paths, else `dataDirectory`), opening sealed ones with `identity`; a file already there is
    /// kept. Everything is opened before anything is laid: a wrong identity changes nothing.
    /// Returns what it did, a line each.
    func restore(into dataDirectory: URL, identity: String?) async throws -> [String] {
        let fm = FileManager.default
        let manifest = (fm.contents(atPath: manifestFile.path)).flatMap { try? JSONDecoder().decode(Manifest.self, from: $0) } ?? Manifest()
        func place(_ name: String) -> URL {
            if name == Self.checkpointName, let file = manifest.checkpointFile { return URL(fileURLWithPath: file) }
            if name == "log-signing-key", let file = manifest.signingKeyFile { return URL(fileURLWithPath: file) }
            return dataDirectory.appendingPathComponent(name)
        }
        try fm.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let opened = dataDirectory.appendingPathComponent(".restore-\(UUID().uuidString.prefix(8))")
        try fm.createDirectory(at: opened, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? fm.removeItem(at: opened) }
        var files: [(name: String, data: URL)] = fm.fileExists(atPath: checkpoint.path) ? [(Self.checkpointName, checkpoint)] : []
        let sealedHere = Self.sealed.filter { fm.fileExists(atPath: secrets.appendingPathComponent($0 + ".age").path) }
        var lines: [String] = []
        if let identity, !sealedHere.isEmpty {
            let age = try Self.age()
            for name in sealedHere {
                let out = opened.appendingPathComponent(name)
                do {
                    try await ProcessRunner.check(age, ["-d", "-i", identity, "-o", out.path, secrets.appendingPathComponent(name + ".age").path])
                } catch let failure as ProcessRunner.Failure {
                    throw Failure(description: "age could not open \(name) with \(identity): \(failure.output.trimmingCharacters(in: .whitespacesAndNewlines))")
                }
                files.append((name, out))
            }
        } else if !sealedHere.isEmpty {
            lines.append("restore: \(sealedHere.joined(separator: ", ")) are sealed in \(secrets.path); pass --identity FILE to open them, or put them in place yourself")
        } else {
            lines.append("restore: the backup holds no secrets; put \(Self.sealed.map { place($0).path }.joined(separator: ", ")) in place from where you keep them")
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

    /// Creates `file` only if nothing is there (O_EXCL): a restore never overwrites.
    static func create(_ file: URL, with data: Data, mode: Int) throws {
        let fd = open(file.path, O_WRONLY | O_CREAT | O_EXCL, mode_t(mode))
        guard fd >= 0 else { throw Failure(description: "cannot create \(file.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count else { throw Failure(description: "cannot write \(file.path)") }
    }
}
