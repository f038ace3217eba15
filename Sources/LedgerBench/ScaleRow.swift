import Foundation

/// One size of `ledger-bench scale`: rates a second, latencies in ms, durations and disk per
/// million events.
struct ScaleRow {
    var events: Int64
    var growthRate = 0.0
    var pgbench16 = 0.0
    var appends16 = 0.0
    var starts = 0.0
    var proofsP99 = 0.0
    var asOfFirstPageP99 = 0.0
    var asOfUnpagedP99 = 0.0
    var tileP99 = 0.0
    var bundleP99 = 0.0
    var ackToCheckpointP99 = 0.0
    /// An append's acknowledgement to the first index revision recorded covering it (ms).
    var indexLagP99 = 0.0
    /// A collaboration's lookup with its proof, 16 clients, each a different collaboration (ms).
    var lookupP99 = 0.0
    var rawRead = 0.0
    var membershipRebuild = 0.0
    var backupPerMillion = 0.0
    var restorePerMillion = 0.0
    var walPerMillion = 0.0
    /// Bytes per million events, by part (`ScaleProbes.disk`).
    var disk: [String: Double] = [:]
    /// A backup whose restore waits for the bench's cluster to be gone (no room beside it); its
    /// figure is then measured on an idle machine with a cold page cache, and marked.
    var pendingRestore: ScaleBackup.Taken?
    /// The tree size up to which tiles were fetched (the next size fetches past it).
    var tilesThrough: Int64 = 0

    /// How each figure is judged against the first size's: rates must keep 80% of it, latencies
    /// and costs stay within 1.2× (issue 47's flat cost).
    enum Kind { case rate, latency, cost, context }

    /// The table's figures, in order: name, kind, value.
    var figures: [(String, Kind, Double)] {
        [
            ("pgbench single-row inserts, 16 clients (/s)", .context, pgbench16),
            ("single appends, 16 writers (/s)", .rate, appends16),
            ("  the same, ×pgbench@16", .rate, appends16 / pgbench16),
            ("starts over HTTP, 16 clients (/s)", .rate, starts),
            ("  the same, ×pgbench@16", .rate, starts / pgbench16),
            ("proof p99 (ms), 16 clients", .latency, proofsP99),
            ("asOf first page p99 (ms), large collaboration", .latency, asOfFirstPageP99),
            ("  baseline: the whole unpaged answer p99 (ms)", .context, asOfUnpagedP99),
            ("full tile p99 (ms), 16 clients", .latency, tileP99),
            ("full entry bundle p99 (ms), 16 clients", .latency, bundleP99),
            ("acknowledgement to checkpoint p99 (ms)", .latency, ackToCheckpointP99),
            ("acknowledgement to index revision p99 (ms)", .latency, indexLagP99),
            ("lookup with its proof p99 (ms), 16 clients", .latency, lookupP99),
            ("raw read of the log (events/s)", .context, rawRead),
            ("membership rebuild (events/s)", .rate, membershipRebuild),
            ("  the same, ×raw read", .rate, membershipRebuild / rawRead),
            ("backup (s per million events)", .cost, backupPerMillion),
            ("restore (s per million events)", .cost, restorePerMillion),
            ("growth: appended (events/s, 8 writers)", .context, growthRate),
            ("disk: events (MB per million)", .cost, (disk["events"] ?? 0) / 1e6),
            ("disk: event indexes (MB per million)", .cost, (disk["event indexes"] ?? 0) / 1e6),
            ("disk: tree (MB per million)", .cost, (disk["tree"] ?? 0) / 1e6),
            ("disk: tree indexes (MB per million)", .cost, (disk["tree indexes"] ?? 0) / 1e6),
            ("disk: views (MB per million)", .cost, (disk["views"] ?? 0) / 1e6),
            ("disk: verifiable index (MB per million)", .cost, (disk["index"] ?? 0) / 1e6),
            ("disk: whole database (MB per million)", .cost, (disk["database"] ?? 0) / 1e6),
            ("WAL written while growing (MB per million)", .cost, walPerMillion / 1e6),
        ]
    }

    /// The size's figures on one line, printed as soon as they are measured.
    var line: String {
        "  at \(events) events: "
            + figures.filter { $0.1 != .context }.map { "\($0.0.trimmingCharacters(in: .whitespaces)) \(Self.text($0.2))" }
            .joined(separator: "; ")
    }

    /// Every figure at every size, and each size's ratio to the first; a figure outside its
    /// bound is marked.
    static func printTable(_ rows: [ScaleRow]) {
        guard let first = rows.first else { return }
        print("")
        print("figure".padding(toLength: 48, withPad: " ", startingAt: 0) + rows.map { String(format: "%14lld", $0.events) }.joined())
        for (index, (name, kind, base)) in first.figures.enumerated() {
            var line = name.padding(toLength: 48, withPad: " ", startingAt: 0)
            for row in rows {
                let value = row.figures[index].2
                let ratio = base == 0 ? 1 : value / base
                let outside =
                    switch kind {
                    case .rate: ratio < 0.8
                    case .latency, .cost: ratio > 1.2
                    case .context: false
                    }
                line += (text(value) + String(format: " (%.2f)%@", ratio, outside ? "!" : " ")).leftPadded(to: 14 + 9)
            }
            print(line)
        }
        print("(each size's ratio to the first in brackets; ! marks a rate under 0.8 of it, or a latency or cost over 1.2×)")
        for row in rows where row.pendingRestore != nil {
            print("(the restore at \(row.events) events ran after the bench's cluster was gone: an idle machine, a cold page cache)")
        }
    }

    /// The table as CSV: a header of sizes, then one line a figure.
    static func csv(_ rows: [ScaleRow]) -> String {
        guard let first = rows.first else { return "" }
        var text = "figure,kind," + rows.map { String($0.events) }.joined(separator: ",") + "\n"
        for (index, (name, kind, _)) in first.figures.enumerated() {
            text +=
                "\"\(name.trimmingCharacters(in: .whitespaces))\",\(kind),"
                + rows.map { String($0.figures[index].2) }.joined(separator: ",")
                + "\n"
        }
        return text
    }

    private static func text(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
