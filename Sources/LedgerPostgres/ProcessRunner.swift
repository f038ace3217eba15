import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a command to completion without blocking the caller's thread: the child is started
/// with posix_spawn and reaped by `waitpid` on a dedicated thread (never an event loop).
/// Output goes to a temporary file (a pipe could fill up and stall the child).
///
/// Foundation's `Process` is not used: on Linux it sometimes misses the exit of a child
/// whose own child daemonises (`pg_ctl start`), leaving the caller waiting forever.
public enum ProcessRunner {
    public struct Output: Sendable {
        public var status: Int32
        public var output: String
    }

    public struct Failure: Error, CustomStringConvertible {
        public var command: String
        public var status: Int32
        public var output: String
        public var description: String {
            "`\(command)` exited with status \(status): \(output.trimmingCharacters(in: .whitespacesAndNewlines))"
        }
    }

    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> Output {
        let outputPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("ledger-run-\(UUID().uuidString).log").path
        defer { unlink(outputPath) }
        let pid = try spawn(executable, arguments, environment: environment, outputPath: outputPath)
        let status = await exit(of: pid)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Output(status: status, output: output)
    }

    /// Runs and waits on the calling thread: only for process exit handlers.
    public static func runBlocking(_ executable: String, _ arguments: [String]) -> Int32 {
        guard let pid = try? spawn(executable, arguments, environment: nil, outputPath: "/dev/null") else { return -1 }
        return waitForExit(pid)
    }

    /// Runs and throws unless the command exits with 0.
    @discardableResult
    public static func check(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> String {
        let result = try await run(executable, arguments, environment: environment)
        guard result.status == 0 else {
            throw Failure(command: ([executable] + arguments).joined(separator: " "), status: result.status, output: result.output)
        }
        return result.output
    }

    /// Finds an executable on PATH.
    public static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Starts a process in the background: stdin from /dev/null, stdout and stderr appended to
    /// `outputPath` (stderr to `errorPath` instead, if given). Reap it with `exitStatus(of:)`.
    public static func launch(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, outputPath: String,
        errorPath: String? = nil
    ) throws -> pid_t {
        try spawn(executable, arguments, environment: environment, outputPath: outputPath, errorPath: errorPath)
    }

    /// Waits for a launched process's exit (reaping it) on a thread of its own, never an event
    /// loop or the cooperative pool: its status, 128 + signal, or -1 if it is no child of ours.
    public static func exit(of pid: pid_t) async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            Thread { continuation.resume(returning: waitForExit(pid)) }.start()
        }
    }

    /// A launched process's exit status once it has exited (reaping it), nil while it runs.
    public static func exitStatus(of pid: pid_t) -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        return decode(status)
    }

    /// Marks every descriptor past stderr close-on-exec (the ones NIO opens are not).
    private static func closeOnExec() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for name in names {
            guard let fd = Int32(name), fd > 2 else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    private static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]?, outputPath: String, errorPath: String? = nil
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing else of this process's: a child that inherited a listening socket (a server
        // this process runs) would keep it open, and take its connections, for as long as it runs.
        closeOnExec()

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer {
            for item in argv { free(item) }
            for item in envp { free(item) }
        }
        // Threads of the concurrency pool block signals, and a child inherits the mask: give it
        // a clean one (pgbench -T relies on SIGALRM) and default handlers.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptySet = sigset_t()
        sigemptyset(&emptySet)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &emptySet)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw Failure(command: executable, status: -1, output: "cannot start: \(String(cString: strerror(rc)))")
        }
        return pid
    }

    private static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return -1 }
        }
        return decode(status)
    }

    /// WIFEXITED / WEXITSTATUS, spelled out (the C macros are not imported); 128 + signal otherwise.
    private static func decode(_ status: Int32) -> Int32 {
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }
}
