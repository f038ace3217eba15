import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A cgroup v1 group, one name under both the `cpu` and the `cpuacct` hierarchies: `cpu` holds
/// its processes to a budget (`cpu.cfs_quota_us` per `cpu.cfs_period_us` of 100 ms), `cpuacct`
/// counts what they used. A process joins by its pid written to each `cgroup.procs`; the
/// processes it forks afterwards are in the group from birth.
///
/// Linux only, and only where cgroup v1's `cpu` controller is mounted at /sys/fs/cgroup/cpu
/// (`refusal()` says so otherwise): cgroup v2 has no controllers enabled on the machines here.
struct CPUGroup: Sendable {
    static let cpuRoot = "/sys/fs/cgroup/cpu"
    static let acctRoot = "/sys/fs/cgroup/cpuacct"
    /// CFS's accounting period, in microseconds: a budget of B cores is B × this of quota.
    static let period = 100_000
    /// Every group this benchmark makes starts so, which lets a later run remove one left behind.
    static let prefix = "ledger-bench-shards-"

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The group's name under each hierarchy.
    let name: String
    /// Cores its processes may use together; nil: counted, not held.
    let budget: Double?

    var cpuPath: String { Self.cpuRoot + "/" + name }
    var acctPath: String { Self.acctRoot + "/" + name }

    /// The folders a pid is written into: one where `cpu` and `cpuacct` are mounted together.
    var folders: [String] { Self.sameHierarchy ? [cpuPath] : [cpuPath, acctPath] }

    static var sameHierarchy: Bool {
        URL(fileURLWithPath: cpuRoot).resolvingSymlinksInPath() == URL(fileURLWithPath: acctRoot).resolvingSymlinksInPath()
    }

    /// Why groups cannot be made here, as a sentence saying what to do; nil if they can.
    static func refusal() -> String? {
        let fm = FileManager.default
        guard fm.fileExists(atPath: cpuRoot + "/cpu.cfs_quota_us"), fm.fileExists(atPath: acctRoot + "/cpuacct.usage") else {
            return
                "--budget needs cgroup v1's cpu and cpuacct controllers, mounted at \(cpuRoot) and \(acctRoot), and they are not: run it on a machine that has them (`mount | grep cgroup`), or drop --budget"
        }
        guard access(cpuRoot, W_OK) == 0, access(acctRoot, W_OK) == 0 else {
            return "--budget makes groups under \(cpuRoot) and \(acctRoot), which this user cannot write: run it as root, or drop --budget"
        }
        return nil
    }

    /// Makes the group (`budget` nil: no quota, usage counted alone).
    static func make(_ name: String, budget: Double?) throws -> CPUGroup {
        let group = CPUGroup(name: Self.prefix + name, budget: budget)
        for folder in [group.cpuPath, group.acctPath] where !FileManager.default.fileExists(atPath: folder) {
            guard mkdir(folder, 0o755) == 0 || errno == EEXIST else {
                throw Failure(
                    description:
                        "cannot make the cgroup \(folder) (\(String(cString: strerror(errno)))): run as root where cgroup v1 is writable, or drop --budget"
                )
            }
        }
        try write("\(period)", to: group.cpuPath + "/cpu.cfs_period_us")
        try write(budget.map { "\(Int(($0 * Double(period)).rounded()))" } ?? "-1", to: group.cpuPath + "/cpu.cfs_quota_us")
        return group
    }

    /// Sets the group's quota to `cores` (its `budget` says what it was made with).
    func hold(to cores: Double) throws {
        try Self.write("\(Int((cores * Double(Self.period)).rounded()))", to: cpuPath + "/cpu.cfs_quota_us")
    }

    /// Moves `pid` (its whole thread group) into the group.
    func add(_ pid: pid_t) throws {
        for folder in folders { try Self.write("\(pid)", to: folder + "/cgroup.procs") }
    }

    /// Moves a PostgreSQL cluster in: its postmaster (the first line of `postmaster.pid`), then
    /// every child it has now; the backends it forks from then on are born in the group. A child
    /// that exits meanwhile is skipped.
    func addCluster(pidFile: String) throws {
        let text = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
        guard let line = text.split(separator: "\n").first, let postmaster = pid_t(line.trimmingCharacters(in: .whitespaces)) else {
            throw Failure(description: "no postmaster pid in \(pidFile)")
        }
        try add(postmaster)
        for child in Self.children(of: postmaster) {
            do {
                try add(child)
            } catch {
                if kill(child, 0) == 0 { throw error }
            }
        }
    }

    /// The command that runs `executable` with `arguments` already inside this group: a shell
    /// that writes its own pid into each `cgroup.procs`, then execs (the same pid), so nothing
    /// of the process runs outside it.
    func wrapping(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        let joins = folders.map { "echo $$ > '\($0)/cgroup.procs'" }.joined(separator: " && ")
        return ("/bin/sh", ["-c", "\(joins) && exec \"$0\" \"$@\"", executable] + arguments)
    }

    /// What the group has used so far, and how often CFS held it back.
    struct Sample: Sendable {
        /// CPU seconds its processes used (`cpuacct.usage`).
        var seconds: Double
        /// Accounting periods in which it ran, and those it ran out of quota in (`cpu.stat`).
        var periods: Double
        var throttled: Double
    }

    func sample() -> Sample {
        let usage = Double(Self.read(acctPath + "/cpuacct.usage").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        var stat: [Substring: Double] = [:]
        for line in Self.read(cpuPath + "/cpu.stat").split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let value = Double(fields[1]) { stat[fields[0]] = value }
        }
        return Sample(seconds: usage / 1e9, periods: stat["nr_periods"] ?? 0, throttled: stat["nr_throttled"] ?? 0)
    }

    /// Removes the group: any process still in it goes back to the root group first (a group
    /// with processes cannot be removed). Returns what could not be done, if anything.
    @discardableResult
    func remove() -> String? {
        Self.remove(name)
    }

    /// Removes the groups an earlier run left behind (stopped before it could), if they are empty.
    static func removeStale() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cpuRoot)) ?? []
        for name in names where name.hasPrefix(prefix) && read(cpuRoot + "/" + name + "/cgroup.procs").isEmpty { remove(name) }
    }

    @discardableResult
    private static func remove(_ name: String) -> String? {
        var problems: [String] = []
        for root in sameHierarchy ? [cpuRoot] : [cpuRoot, acctRoot] {
            let folder = root + "/" + name
            guard FileManager.default.fileExists(atPath: folder) else { continue }
            for pid in read(folder + "/cgroup.procs").split(separator: "\n") { try? write(String(pid), to: root + "/cgroup.procs") }
            if rmdir(folder) != 0 { problems.append("\(folder): \(String(cString: strerror(errno)))") }
        }
        return problems.isEmpty ? nil : "could not remove the cgroup " + problems.joined(separator: "; ")
    }

    /// The pids whose parent is `parent` now (`/proc/PID/stat`'s fourth field).
    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    private static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// One write(2) of `value`, as the kernel's cgroup files want it; its error in a sentence.
    private static func write(_ value: String, to path: String) throws {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(value.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
            throw Failure(description: "cannot write \(value) to \(path): \(String(cString: strerror(errno)))")
        }
    }
}
