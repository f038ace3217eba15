import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerPostgres

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// One `ledger serve` process, the shipped binary beside `ledger-bench`, started inside a CPU
/// group (`CPUGroup.wrapping`) on a free port of 127.0.0.1, with its own data folder and the
/// deployment's settings the caller passes (database, shard cluster, token secret, signing key).
/// Its output goes to `serve.log` in its folder, whose tail a failure quotes.
struct ServeProcess: Sendable {
    let pid: pid_t
    let url: URL
    let log: String

    /// The `ledger` executable beside this one; a sentence saying how to build it if missing.
    static func executable() throws -> String {
        let path = URL(fileURLWithPath: LoadProcess.executable).deletingLastPathComponent().appendingPathComponent("ledger").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ValidationError(
                "--budget runs `ledger serve` processes from \(path), which is not there: build it beside ledger-bench (swift build -c release --product ledger-bench --product ledger)"
            )
        }
        return path
    }

    /// Starts `ledger serve` in `group` with `settings` (LEDGER_… variables; any the caller's
    /// environment sets is dropped, so only these apply) and waits until it answers `/ready`:
    /// it listens once every shard that answers has joined.
    static func start(_ ledger: String, in group: CPUGroup, settings: [String: String], folder: URL) async throws -> ServeProcess {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let port = try EmbeddedPostgres.freePort()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
        environment.merge(settings) { $1 }
        environment[Setting.host.variable] = "127.0.0.1"
        environment[Setting.port.variable] = "\(port)"
        environment[Setting.dataDir.variable] = folder.path
        let log = folder.appendingPathComponent("serve.log").path
        let (executable, arguments) = group.wrapping(ledger, ["serve"])
        let pid = try ProcessRunner.launch(executable, arguments, environment: environment, outputPath: log)
        let server = ServeProcess(pid: pid, url: URL(string: "http://127.0.0.1:\(port)")!, log: log)
        do {
            try await server.ready(within: .seconds(120))
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    /// Waits until `GET /ready` answers 200, or throws with the log's tail when the process exits
    /// or `limit` passes first.
    func ready(within limit: Duration) async throws {
        let request = URLRequest(url: url.appendingPathComponent("ready"))
        let port = url.port!
        try await LoadProcess.poll("`ledger serve` on port \(port) ready", within: limit, every: .milliseconds(50)) {
            if let status = ProcessRunner.exitStatus(of: pid) {
                throw ValidationError("`ledger serve` exited (\(status)) before it was ready: \(tail)")
            }
            guard let transport = try? await NIOTransport.connect(host: "127.0.0.1", port: port) else { return false }
            let answer = try? await transport.send(request)
            await transport.close()
            return answer?.status == 200
        }
    }

    /// SIGTERM, then its exit awaited for 30 s at most, then SIGKILL: a server that hangs on its
    /// way out does not hold the benchmark, nor its group (which cannot be removed while it runs).
    func stop() async {
        // Reaped already (it exited while awaited elsewhere): its pid may be another's by now.
        guard ProcessRunner.exitStatus(of: pid) == nil, kill(pid, 0) == 0 else { return }
        kill(pid, SIGTERM)
        do {
            try await LoadProcess.poll("`ledger serve` stopped", within: .seconds(30), every: .milliseconds(20)) {
                ProcessRunner.exitStatus(of: pid) != nil
            }
        } catch {
            kill(pid, SIGKILL)
            _ = await ProcessRunner.exit(of: pid)
        }
    }

    /// The sum over label sets of each metric `names` names in the server's `/metrics` (0 for
    /// one it does not show), e.g. a histogram's `_sum` and `_count`; empty if it did not answer.
    func metrics(_ names: Set<String>) async -> [String: Double] {
        guard let transport = try? await NIOTransport.connect(host: "127.0.0.1", port: url.port!) else { return [:] }
        let answer = try? await transport.send(URLRequest(url: url.appendingPathComponent("metrics")))
        await transport.close()
        guard let (body, status) = answer, status == 200 else { return [:] }
        var sums = Dictionary(uniqueKeysWithValues: names.map { ($0, 0.0) })
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            guard names.contains(name), let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            sums[name, default: 0] += value
        }
        return sums
    }

    var tail: String {
        String(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(2000))
    }
}
