import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CPU time spent while a benchmark phase runs: by the whole machine (every process, the
/// database's included; Linux's `/proc/stat`) and by this process (`getrusage`). A phase's
/// cost per operation is what a rate cannot show: whether the cores were the limit, and
/// whose work filled them.
struct CPUTime: Sendable {
    /// Seconds the machine's cores were busy (user, nice, system, irq, softirq; not idle,
    /// I/O wait or time stolen by a hypervisor), summed over cores. Nil where unknown.
    var machine: Double?
    /// Seconds of CPU this process used (user and system).
    var process: Double

    static func now() -> CPUTime {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        let process =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
        let machine = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap(machineBusy(procStat:))
        return CPUTime(machine: machine, process: process)
    }

    /// The busy seconds in `/proc/stat`'s first line (`cpu user nice system idle iowait irq
    /// softirq steal ...`, in clock ticks of 1/100 s).
    static func machineBusy(procStat: String) -> Double? {
        guard let line = procStat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 7 else { return nil }
        let (user, nice, system, irq, softirq) = (ticks[0], ticks[1], ticks[2], ticks[5], ticks[6])
        return (user + nice + system + irq + softirq) / 100
    }

    /// The CPU spent from `start` to now, in milliseconds per operation.
    struct PerOperation: Sendable {
        var machine: Double?
        var process: Double
    }

    static func since(_ start: CPUTime, operations: Int) -> PerOperation {
        let end = now()
        let n = Double(max(operations, 1))
        var machine: Double?
        if let before = start.machine, let after = end.machine { machine = (after - before) * 1000 / n }
        return PerOperation(machine: machine, process: (end.process - start.process) * 1000 / n)
    }

    /// The machine's cores (what `machine` is summed over).
    static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }
}
