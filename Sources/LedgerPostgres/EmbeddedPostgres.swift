import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private PostgreSQL cluster started from the system's PostgreSQL binaries under a data
/// folder: initdb on first use, reused afterwards, stopped on shutdown. As root, the cluster
/// runs under an unprivileged system user (PostgreSQL refuses to run as root).
///
/// Layout of the data folder: `pg/` (the cluster), `pg-password` (0600), `postgres.log`.
public actor EmbeddedPostgres {
    public struct Options: Sendable {
        public var dataDirectory: URL
        /// Extra server settings (`-c name=value`), e.g. `fsync=off` for throwaway test clusters.
        public var serverSettings: [String: String]
        public var username: String
        public var database: String
        /// The folder of PostgreSQL's server binaries to prefer (`LEDGER_PG_BIN`); nil, or one
        /// without a server: found on the machine (`binaries(preferring:)`).
        public var binaries: String?

        public init(
            dataDirectory: URL, serverSettings: [String: String] = [:], username: String = "ledger",
            database: String = "ledger", binaries: String? = nil
        ) {
            self.dataDirectory = dataDirectory
            self.serverSettings = serverSettings
            self.username = username
            self.database = database
            self.binaries = binaries
        }
    }

    public struct EmbeddedError: Error, CustomStringConvertible {
        public var description: String
    }

    let options: Options
    let logger: Logger
    private var startedByUs = false
    private var settings: DatabaseSettings?
    private var runAs: String?
    private var binDirectory: String?

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    var clusterPath: String { options.dataDirectory.appendingPathComponent("pg").path }
    var passwordPath: String { options.dataDirectory.appendingPathComponent("pg-password").path }
    var logPath: String { options.dataDirectory.appendingPathComponent("postgres.log").path }

    /// Starts the cluster (or attaches to the one already running from this folder) and
    /// returns how to connect to its `ledger` database.
    public func start() async throws -> DatabaseSettings {
        if let settings { return settings }
        let bin = try Self.findBinaries(preferring: options.binaries)
        binDirectory = bin
        runAs = try await Self.unprivilegedUserIfRoot()
        try prepareDataDirectory()
        try checkPasswordKept()
        let password = try loadOrCreatePassword()
        if !FileManager.default.fileExists(atPath: clusterPath + "/PG_VERSION") {
            try await initdb(password: password)
        }
        let port: Int
        if let running = try await runningPort() {
            logger.info("attaching to the embedded PostgreSQL already running", metadata: ["port": "\(running)"])
            port = running
        } else {
            port = try await startServer()
            startedByUs = true
        }
        let settings = DatabaseSettings(
            host: "127.0.0.1", port: port, username: options.username, password: password,
            database: options.database, tls: .disable)
        try await logIn(settings)
        self.settings = settings
        return settings
    }

    /// Stops the cluster if this instance started it (fast shutdown: sessions end, data is safe).
    public func stop() async throws {
        guard startedByUs, let bin = binDirectory else { return }
        try await run(bin + "/pg_ctl", ["stop", "-D", clusterPath, "-m", "fast", "-w", "-t", "60"])
        startedByUs = false
        settings = nil
        logger.info("embedded PostgreSQL stopped")
    }

    /// Stops with an immediate shutdown (crash-like: recovery runs at the next start).
    public func kill() async throws {
        guard let bin = binDirectory else { return }
        try await run(bin + "/pg_ctl", ["stop", "-D", clusterPath, "-m", "immediate", "-w", "-t", "60"])
        startedByUs = false
        settings = nil
    }

    /// A crash and a restart on the same port: immediate shutdown (no checkpoint; the next
    /// start replays the WAL), `downFor` of outage, then start. Clients keep their settings.
    public func restartImmediately(downFor: Duration = .seconds(1)) async throws {
        try await stopImmediately()
        try await Task.sleep(for: downFor)
        try await startAgain()
    }

    /// An immediate shutdown (crash-like) that keeps the port for `startAgain()`.
    public func stopImmediately() async throws {
        guard let bin = binDirectory, settings != nil else {
            throw EmbeddedError(description: "stop: the cluster was not started by this instance")
        }
        try await run(bin + "/pg_ctl", ["stop", "-D", clusterPath, "-m", "immediate", "-w", "-t", "60"])
        logger.info("embedded PostgreSQL stopped (immediate)")
    }

    /// Starts again, on the port it had, after `stopImmediately()`: clients keep their settings.
    public func startAgain() async throws {
        guard let bin = binDirectory, let port = settings?.port else {
            throw EmbeddedError(description: "restart: the cluster was not started by this instance")
        }
        try await run(
            bin + "/pg_ctl", ["start", "-D", clusterPath, "-l", logPath, "-w", "-t", "60", "-o", serverOptions(port: port)])
        logger.info("embedded PostgreSQL restarted", metadata: ["port": "\(port)"])
    }

    // MARK: Steps

    /// Starts a streaming-replication hot standby of `primary` in this folder (`pg_basebackup -R`
    /// on first use): the primary's data and roles, read-only, following its WAL. For tests and
    /// benchmarks of read replicas; `stop()` stops it like any cluster, and this starts it again.
    /// With `slot`, it streams through a physical replication slot of that name on the primary
    /// (created by the base backup), which keeps how far it flushed while it is away.
    public func startStandby(of primary: DatabaseSettings, slot: String? = nil) async throws -> DatabaseSettings {
        if let settings { return settings }
        binDirectory = try Self.findBinaries(preferring: options.binaries)
        runAs = try await Self.unprivilegedUserIfRoot()
        try prepareDataDirectory()
        if !FileManager.default.fileExists(atPath: clusterPath + "/PG_VERSION") {
            var environment = Self.environment()
            environment["PGPASSWORD"] = primary.password
            let (exe, args) = command(
                binDirectory! + "/pg_basebackup",
                [
                    "-D", clusterPath, "-R", "-X", "stream", "--checkpoint=fast", "-h", primary.host, "-p", "\(primary.port)", "-U",
                    primary.username,
                ]
                    + (slot.map { ["-C", "-S", $0] } ?? []))
            try await ProcessRunner.check(exe, args, environment: environment)
        }
        let port = try await startServer()
        startedByUs = true
        let settings = DatabaseSettings(
            host: "127.0.0.1", port: port, username: primary.username, password: primary.password, database: options.database, tls: .disable
        )
        self.settings = settings
        return settings
    }

    private func prepareDataDirectory() throws {
        let fm = FileManager.default
        let root = options.dataDirectory.path
        try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
        if !fm.fileExists(atPath: clusterPath) {
            try fm.createDirectory(atPath: clusterPath, withIntermediateDirectories: false)
        }
        chmod(clusterPath, 0o700)
        if let user = runAs {
            // The cluster belongs to the unprivileged user; the folder around it may only be crossed.
            chmod(root, 0o711)
            try chown(path: clusterPath, to: user, recursive: true)
            if !fm.fileExists(atPath: logPath) { fm.createFile(atPath: logPath, contents: nil) }
            try chown(path: logPath, to: user, recursive: false)
            var dir = options.dataDirectory.deletingLastPathComponent()
            while dir.path != "/" {
                var info = stat()
                if stat(dir.path, &info) == 0, info.st_mode & 0o001 == 0 {
                    throw EmbeddedError(
                        description:
                            "\(dir.path) is not traversable by the system user \(user) that runs PostgreSQL; choose another --data-dir")
                }
                dir = dir.deletingLastPathComponent()
            }
        }
    }

    private func chown(path: String, to user: String, recursive: Bool) throws {
        guard let entry = getpwnam(user) else { throw EmbeddedError(description: "no user \(user)") }
        let uid = entry.pointee.pw_uid
        let gid = entry.pointee.pw_gid
        var paths = [path]
        if recursive, let enumerator = FileManager.default.enumerator(atPath: path) {
            while let next = enumerator.nextObject() as? String { paths.append(path + "/" + next) }
        }
        for p in paths where lchown(p, uid, gid) != 0 {
            throw EmbeddedError(description: "cannot hand \(p) to \(user): \(String(cString: strerror(errno)))")
        }
    }

    private func loadOrCreatePassword(at path: String? = nil) throws -> String {
        let path = path ?? passwordPath
        if let existing = try? String(contentsOfFile: path, encoding: .utf8) {
            return existing.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let password = Self.randomToken()
        FileManager.default.createFile(atPath: path, contents: Data(password.utf8), attributes: [.posixPermissions: 0o600])
        return password
    }

    /// How the services connect: as `ledger_app`, a member of `ledger_service` (run the
    /// migrations first), with a password kept in the data folder beside the owner's, so every
    /// process on this cluster uses the same one.
    public func serviceSettings(owner: DatabaseSettings) async throws -> DatabaseSettings {
        let password = try loadOrCreatePassword(at: options.dataDirectory.appendingPathComponent("app-password").path)
        return try await PostgresAdmin.serviceLogin("ledger_app", password: password, on: owner, logger: logger)
    }

    static func randomToken(bytes: Int = 24) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    private func initdb(password: String) async throws {
        logger.info("creating the embedded PostgreSQL cluster", metadata: ["path": "\(clusterPath)"])
        // initdb reads the superuser password from a file the cluster's user can read.
        let pwfile = clusterPath + "/../.initdb-pw-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: pwfile, contents: Data(password.utf8), attributes: [.posixPermissions: 0o600])
        defer { try? FileManager.default.removeItem(atPath: pwfile) }
        if let user = runAs { try chown(path: pwfile, to: user, recursive: false) }
        try await run(
            binDirectory! + "/initdb",
            [
                "-D", clusterPath, "-U", options.username, "--pwfile=" + pwfile, "--auth=scram-sha-256", "-E", "UTF8",
                "--locale=C", "--no-instructions",
            ])
    }

    private func runningPort() async throws -> Int? {
        let status = try await runOutput(binDirectory! + "/pg_ctl", ["status", "-D", clusterPath])
        guard status.status == 0 else { return nil }
        // postmaster.pid: line 4 holds the port.
        let pidFile = (try? String(contentsOfFile: clusterPath + "/postmaster.pid", encoding: .utf8)) ?? ""
        let lines = pidFile.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 3, let port = Int(lines[3].trimmingCharacters(in: .whitespaces)) else { return nil }
        return port
    }

    private func startServer() async throws -> Int {
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try Self.freePort()
            do {
                try await run(
                    binDirectory! + "/pg_ctl",
                    ["start", "-D", clusterPath, "-l", logPath, "-w", "-t", "60", "-o", serverOptions(port: port)])
                logger.info("embedded PostgreSQL started", metadata: ["port": "\(port)", "data": "\(clusterPath)"])
                return port
            } catch {
                lastError = error
                logger.warning("embedded PostgreSQL did not start, retrying", metadata: ["error": "\(error)"])
            }
        }
        let tail = (try? String(contentsOfFile: logPath, encoding: .utf8))?.split(separator: "\n").suffix(10).joined(separator: "\n") ?? ""
        throw EmbeddedError(description: "embedded PostgreSQL did not start: \(lastError.map { "\($0)" } ?? "")\n\(tail)")
    }

    private func serverOptions(port: Int) -> String {
        var serverOptions = ["-p \(port)", "-c listen_addresses=127.0.0.1", "-c unix_socket_directories=''"]
        for (name, value) in options.serverSettings.sorted(by: { $0.key < $1.key }) {
            serverOptions.append("-c \(name)=\(value)")
        }
        return serverOptions.joined(separator: " ")
    }

    func ensureDatabase(_ settings: DatabaseSettings) async throws {
        let maintenance = settings.with(database: "postgres")
        try await PostgresAdmin.createDatabaseIfMissing(options.database, on: maintenance, logger: logger)
    }

    // MARK: Running commands as the cluster's user

    private func command(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        guard let user = runAs else { return (executable, arguments) }
        return ("/usr/sbin/runuser", ["-u", user, "--", executable] + arguments)
    }

    private func run(_ executable: String, _ arguments: [String]) async throws {
        let (exe, args) = command(executable, arguments)
        try await ProcessRunner.check(exe, args, environment: Self.environment())
    }

    private func runOutput(_ executable: String, _ arguments: [String]) async throws -> ProcessRunner.Output {
        let (exe, args) = command(executable, arguments)
        return try await ProcessRunner.run(exe, args, environment: Self.environment())
    }

    static func environment() -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["LC_ALL"] = "C"
        env.removeValue(forKey: "PGDATA")
        return env
    }
}
