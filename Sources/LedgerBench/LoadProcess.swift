import ArgumentParser
import Foundation
import LedgerPostgres

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one phase of load from a separate `ledger-bench load` process (`BenchLoad`) against a
/// server in this process, and splits the phase's CPU: this process (the server), PostgreSQL's
/// processes, the load process, the whole machine.
enum LoadProcess {
    /// A phase's figures. CPU figures are milliseconds per call.
    struct Outcome: Sendable {
        var calls: Int
        var rate: Double
        var p50: Double
        var p99: Double
        var server: Double
        var postgres: Double?
        var load: Double
        var machine: Double?
    }

    /// `settle` runs once the load process is set up and before the timed phase starts: what
    /// the set-up caused (the views catching up) is not counted in the phase.
    static func run(_ plan: LoadPlan, settle: () async throws -> Void = {}) async throws -> Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try JSONEncoder().encode(plan).write(to: folder.appendingPathComponent("plan.json"))
        let log = folder.appendingPathComponent("load.log").path
        let pid = try ProcessRunner.launch(Self.executable, ["load", folder.path], outputPath: log)
        var exited = false
        do {
            // Set-up is untimed; the phase starts when this process says go.
            try await poll("the load process ready", within: .seconds(120), every: .milliseconds(5)) {
                if let status = ProcessRunner.exitStatus(of: pid) {
                    exited = true
                    throw ValidationError("the load process exited (\(status)) before it was ready: \(Self.tail(log))")
                }
                return FileManager.default.fileExists(atPath: folder.appendingPathComponent("ready").path)
            }
            try await settle()
        } catch {
            if !exited { await stop(pid) }
            throw error
        }
        let before = (cpu: CPUTime.now(), postgres: postgresSeconds())
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("go").path, contents: nil)
        // The phase lasts `seconds`; a call that never gets an answer must not hold the bench.
        var status: Int32 = -1
        do {
            try await poll("the load process's phase", within: .seconds(plan.seconds + 60), every: .milliseconds(5)) {
                guard let exit = ProcessRunner.exitStatus(of: pid) else { return false }
                status = exit
                return true
            }
        } catch {
            await stop(pid)
            throw ValidationError("\(error): \(Self.tail(log))")
        }
        let after = (cpu: CPUTime.now(), postgres: postgresSeconds())
        guard status == 0, let data = FileManager.default.contents(atPath: folder.appendingPathComponent("result.json").path) else {
            throw ValidationError("the load process failed (\(status)): \(Self.tail(log))")
        }
        let result = try JSONDecoder().decode(LoadResult.self, from: data)
        let calls = Double(max(result.calls, 1))
        func perCall(_ seconds: Double) -> Double { seconds * 1000 / calls }
        var machine: Double?
        if let a = before.cpu.machine, let b = after.cpu.machine { machine = perCall(b - a) }
        var postgres: Double?
        if let a = before.postgres, let b = after.postgres { postgres = perCall(b - a) }
        return Outcome(
            calls: result.calls, rate: result.rate, p50: result.p50, p99: result.p99,
            server: perCall(after.cpu.process - before.cpu.process),
            postgres: postgres, load: result.cpuPerCall, machine: machine)
    }

    /// This executable (the load process is the same binary's `load`).
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Checks `done` every `interval` until it holds; throws once `limit` has passed without.
    static func poll(
        _ what: String, within limit: Duration, every interval: Duration, _ done: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !done() {
            guard ContinuousClock.now < deadline else { throw ValidationError("\(what): not within \(limit)") }
            try await Task.sleep(for: interval)
        }
    }

    private static func stop(_ pid: pid_t) async {
        kill(pid, SIGKILL)
        _ = await ProcessRunner.exit(of: pid)
    }

    /// CPU seconds used so far by every process named `postgres` on this machine (`/proc/PID/stat`'s
    /// utime and stime, with cutime and cstime: a backend or autovacuum worker that exits moves
    /// its time into the postmaster's, so the sum neither drops nor loses it). The bench's cluster
    /// (any other on the machine counts too). Nil where `/proc` is not there or no PostgreSQL
    /// runs here (a --database-url on another host).
    static func postgresSeconds() -> Double? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        var ticks = 0.0
        var found = false
        for entry in entries where entry.allSatisfy(\.isNumber) {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: open)..<close] == "postgres"
            else { continue }
            // Fields after the name: state is field 3; utime, stime, cutime and cstime are fields 14 to 17.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 14 else { continue }
            let times = fields[11...14].compactMap { Double($0) }
            guard times.count == 4 else { continue }
            ticks += times.reduce(0, +)
            found = true
        }
        return found ? ticks / Double(sysconf(Int32(_SC_CLK_TCK))) : nil
    }

    private static func tail(_ path: String) -> String {
        String(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").suffix(2000))
    }
}
