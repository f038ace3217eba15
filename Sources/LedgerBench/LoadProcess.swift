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
        var rate: Double
        var p50: Double
        var p99: Double
        var server: Double
        var postgres: Double?
        var load: Double
        var machine: Double?
    }

    static func run(_ plan: LoadPlan) async throws -> Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try JSONEncoder().encode(plan).write(to: folder.appendingPathComponent("plan.json"))
        let log = folder.appendingPathComponent("load.log").path
        let pid = try ProcessRunner.launch(Self.executable, ["load", folder.path], outputPath: log)
        var exited: Int32?
        do {
            // Set-up is untimed; the phase starts when this process says go.
            let deadline = ContinuousClock.now + .seconds(120)
            while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("ready").path) {
                if let status = ProcessRunner.exitStatus(of: pid) {
                    exited = status
                    throw ValidationError("the load process exited (\(status)) before it was ready: \(Self.tail(log))")
                }
                guard ContinuousClock.now < deadline else { throw ValidationError("the load process was not ready within 120 s") }
                try await Task.sleep(for: .milliseconds(5))
            }
        } catch {
            if exited == nil {
                kill(pid, SIGKILL)
                _ = await ProcessRunner.exit(of: pid)
            }
            throw error
        }
        let before = (cpu: CPUTime.now(), postgres: postgresSeconds())
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("go").path, contents: nil)
        let status = await ProcessRunner.exit(of: pid)
        let after = (cpu: CPUTime.now(), postgres: postgresSeconds())
        guard status == 0, let data = FileManager.default.contents(atPath: folder.appendingPathComponent("result.json").path) else {
            throw ValidationError("the load process failed (\(status)): \(Self.tail(log))")
        }
        let result = try JSONDecoder().decode(LoadResult.self, from: data)
        let calls = max(result.rate * plan.seconds, 1)
        func perCall(_ seconds: Double) -> Double { seconds * 1000 / calls }
        var machine: Double?
        if let a = before.cpu.machine, let b = after.cpu.machine { machine = perCall(b - a) }
        var postgres: Double?
        if let a = before.postgres, let b = after.postgres { postgres = perCall(b - a) }
        return Outcome(
            rate: result.rate, p50: result.p50, p99: result.p99, server: perCall(after.cpu.process - before.cpu.process),
            postgres: postgres, load: result.cpuPerCall, machine: machine)
    }

    /// This executable (the load process is the same binary's `load`).
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// CPU seconds used so far by every process named `postgres` on this machine (`/proc/PID/stat`'s
    /// utime and stime): the bench's cluster, its postmaster, backends and background workers.
    /// Nil where `/proc` is not there. A backend that exits during a phase takes its time along;
    /// the ledger's pool keeps its connections, so none does.
    static func postgresSeconds() -> Double? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        var ticks = 0.0
        for entry in entries where entry.allSatisfy(\.isNumber) {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: open)..<close] == "postgres"
            else { continue }
            // Fields after the name: state is field 3; utime and stime are fields 14 and 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            ticks += user + system
        }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private static func tail(_ path: String) -> String {
        String(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").suffix(2000))
    }
}
