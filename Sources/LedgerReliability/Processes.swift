import Foundation
import LedgerPostgres
import LedgerStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The ledger's roles as separate processes of the `ledger` executable, as an operator runs
/// them; each writes its output to `<name>.log` in the run's folder.
final class RoleProcesses: Sendable {
    let ledger: String
    let folder: URL
    let environment: [String: String]
    private let running = Mutex<[String: pid_t]>([:])
    private let arguments = Mutex<[String: [String]]>([:])
    /// Roles that exited on their own and were started again, with their exit status.
    let restarts = Mutex<[(name: String, status: Int32)]>([])

    init(ledger: String, folder: URL, environment: [String: String]) {
        self.ledger = ledger
        self.folder = folder
        self.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }

    /// Starts `ledger <arguments>` under `name` (e.g. "projector-1").
    func start(_ name: String, _ arguments: [String]) throws {
        let log = folder.appendingPathComponent("\(name).log").path
        let pid = try ProcessRunner.launch(ledger, arguments, environment: environment, outputPath: log)
        running.withLock { $0[name] = pid }
        self.arguments.withLock { $0[name] = arguments }
    }

    /// What a supervisor (compose `restart: unless-stopped`, systemd) does: a role that exits
    /// on its own is started again. Runs until cancelled.
    func supervise() async {
        while !Task.isCancelled {
            for (name, status) in exited() {
                restarts.withLock { $0.append((name, status)) }
                if let arguments = arguments.withLock({ $0[name] }) { try? start(name, arguments) }
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// `kill -9`: no shutdown handler runs, connections drop mid-transaction. Returns the pid.
    func kill9(_ name: String) async -> pid_t? {
        guard let pid = running.withLock({ $0.removeValue(forKey: name) }) else { return nil }
        kill(pid, SIGKILL)
        while ProcessRunner.exitStatus(of: pid) == nil { try? await Task.sleep(for: .milliseconds(20)) }
        return pid
    }

    /// Processes that exited on their own, with their status (a role must not die of a fault).
    func exited() -> [String: Int32] {
        running.withLock { table in
            var gone: [String: Int32] = [:]
            for (name, pid) in table {
                if let status = ProcessRunner.exitStatus(of: pid) { gone[name] = status }
            }
            for name in gone.keys { table.removeValue(forKey: name) }
            return gone
        }
    }

    /// SIGTERM to every process, then waits for each (SIGKILL after `grace`). Returns the
    /// names of those that did not stop gracefully.
    func stopAll(grace: Duration = .seconds(45)) async -> [String] {
        let all = running.withLock { table in
            defer { table.removeAll() }
            return table
        }
        for pid in all.values { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + grace
        var forced: [String] = []
        for (name, pid) in all.sorted(by: { $0.key < $1.key }) {
            var status = ProcessRunner.exitStatus(of: pid)
            while status == nil && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(50))
                status = ProcessRunner.exitStatus(of: pid)
            }
            if status == nil {
                kill(pid, SIGKILL)
                while ProcessRunner.exitStatus(of: pid) == nil { try? await Task.sleep(for: .milliseconds(20)) }
                forced.append(name)
            } else if status != 0 {
                forced.append("\(name) (exit \(status!))")
            }
        }
        return forced
    }

    /// Runs `ledger <arguments>` to completion.
    func runToEnd(_ arguments: [String]) async throws -> ProcessRunner.Output {
        try await ProcessRunner.run(ledger, arguments, environment: environment)
    }
}
