import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the embedded cluster needs from the machine: PostgreSQL's server binaries, a user
/// that is not root to run them as, a free port.
extension EmbeddedPostgres {
    /// PostgreSQL's server binaries: `preferred` (the configuration's `LEDGER_PG_BIN`) if it
    /// holds a server, else the newest Debian cluster version, else PATH's. The caller passes the
    /// setting in: this target sits below `LedgerConfiguration` and reads no environment.
    public static func binaries(preferring preferred: String? = nil) throws -> String { try findBinaries(preferring: preferred) }

    /// The system user a root process runs the cluster as, if one exists already.
    public static func systemUserName() -> String? {
        ["postgres", "ledger-postgres"].first { getpwnam($0) != nil }
    }

    static func findBinaries(preferring preferred: String?) throws -> String {
        let fm = FileManager.default
        func hasServer(_ dir: String) -> Bool {
            fm.isExecutableFile(atPath: dir + "/initdb") && fm.isExecutableFile(atPath: dir + "/pg_ctl")
                && fm.isExecutableFile(atPath: dir + "/postgres")
        }
        if let dir = preferred, hasServer(dir) { return dir }
        if let versions = try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql") {
            let sorted = versions.compactMap { Int($0) }.sorted(by: >)
            for version in sorted where hasServer("/usr/lib/postgresql/\(version)/bin") {
                return "/usr/lib/postgresql/\(version)/bin"
            }
        }
        if let initdb = ProcessRunner.which("initdb") {
            let dir = URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
            if hasServer(dir) { return dir }
        }
        throw EmbeddedError(
            description:
                "no PostgreSQL server binaries found (looked in LEDGER_PG_BIN, /usr/lib/postgresql/*/bin and PATH); install them with `apt-get install postgresql` or set LEDGER_DATABASE_URL"
        )
    }

    /// As root: the `postgres` system user if there is one, else a `ledger-postgres` system
    /// user created for the purpose. Otherwise nil (run as ourselves).
    static func unprivilegedUserIfRoot() async throws -> String? {
        guard geteuid() == 0 else { return nil }
        if let existing = systemUserName() { return existing }
        try await ProcessRunner.check(
            "/usr/sbin/useradd",
            ["--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", "ledger-postgres"])
        return "ledger-postgres"
    }

    /// A port the kernel says is free right now on 127.0.0.1.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EmbeddedError(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw EmbeddedError(description: "bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw EmbeddedError(description: "getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
