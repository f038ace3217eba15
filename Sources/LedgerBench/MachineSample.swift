import Foundation
import LedgerPostgres

/// What the whole machine did, read at one instant: its cores' busy time (`/proc/stat`) and its
/// disks' (`/proc/diskstats`). Two samples around a phase say what every process on it shares:
/// the cores (ours and anyone else's), and the disk every cluster's WAL is flushed to.
struct MachineSample: Sendable {
    var at: ContinuousClock.Instant
    /// Seconds the cores were busy, summed over cores (`CPUTime.machineBusy`); nil where unknown.
    var busy: Double?
    /// Milliseconds a disk had I/O in flight (`io_ticks`), and the flushes it completed, summed
    /// over the whole disks of `/sys/block` (partitions would count twice).
    var diskBusy: Double
    var flushes: Double
    var writes: Double

    static func now() -> MachineSample {
        let disks = Set((try? FileManager.default.contentsOfDirectory(atPath: "/sys/block")) ?? [])
        var (busy, flushes, writes) = (0.0, 0.0, 0.0)
        let stats = (try? String(contentsOfFile: "/proc/diskstats", encoding: .utf8)) ?? ""
        for line in stats.split(separator: "\n") {
            // major minor name, reads (4 fields), writes (4), in flight, io_ticks, weighted,
            // discards (4), flushes (2): at least 20 fields where flushes are counted.
            let fields = line.split(separator: " ")
            guard fields.count >= 14, disks.contains(String(fields[2])), !fields[2].hasPrefix("loop"), !fields[2].hasPrefix("ram")
            else { continue }
            writes += Double(fields[7]) ?? 0
            busy += Double(fields[12]) ?? 0
            if fields.count >= 20 { flushes += Double(fields[18]) ?? 0 }
        }
        let cores = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap(CPUTime.machineBusy(procStat:))
        return MachineSample(at: .now, busy: cores, diskBusy: busy, flushes: flushes, writes: writes)
    }

    /// From `start` to this sample: wall seconds, busy cores (nil where unknown), the share of
    /// the time a disk was busy, and flushes and writes a second.
    func since(_ start: MachineSample) -> (seconds: Double, cores: Double?, diskBusy: Double, flushes: Double, writes: Double) {
        let seconds = max((at - start.at).seconds, 1e-9)
        var cores: Double?
        if let a = start.busy, let b = busy { cores = (b - a) / seconds }
        return (
            seconds, cores, (diskBusy - start.diskBusy) / 1000 / seconds, (flushes - start.flushes) / seconds,
            (writes - start.writes) / seconds
        )
    }
}
