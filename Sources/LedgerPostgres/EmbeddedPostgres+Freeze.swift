#if os(Linux)
    import Foundation
    import Glibc

    /// A server that hangs, for tests of what the ledger does then: every process of the cluster
    /// (the postmaster and its children) stopped with SIGSTOP, so connections are accepted by the
    /// kernel and never answered, and queries in flight never end; `thaw` lets them go on.
    extension EmbeddedPostgres {
        public func freeze() throws { try signalAll(SIGSTOP) }

        public func thaw() throws { try signalAll(SIGCONT) }

        /// The postmaster (the first line of `postmaster.pid`) and every process whose parent it is.
        private func signalAll(_ signal: Int32) throws {
            let file = URL(fileURLWithPath: clusterPath).appendingPathComponent("postmaster.pid")
            guard let first = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").first, let postmaster = Int32(first)
            else { throw EmbeddedError(description: "no running postmaster in \(clusterPath)") }
            var pids = [postmaster]
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { continue }
                // `pid (comm) state ppid …`: the fields after the command's closing parenthesis.
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 1, Int32(fields[1]) == postmaster { pids.append(pid) }
            }
            for pid in pids { _ = Glibc.kill(pid, signal) }
        }
    }
#endif
