import Foundation

extension BudgetedShards {
    /// The medians of the rounds, each N beside N = 1 (the first of `counts`) of the same run, the
    /// issue's targets checked, and the CSV for `scripts/plot-shards` if asked for.
    func summarise(_ measured: Measured) {
        let outcomes = measured.phases
        let baselineCount = counts.min() ?? 1
        print("")
        print(
            """
            medians of \(rounds) rounds; ×\(baselineCount) is the ratio to \(baselineCount) shard\(baselineCount == 1 ? "" : "s") of the \
            same run (in brackets, the rounds' own ratios). CPU a call in ms, summed over the servers' groups and over the \
            PostgreSQL groups; "used" is the busiest group's share of its \(budget)-core budget, "least" the least busy one's, "held" the share of CFS periods \
            the groups ran out of quota in; the load generator's CPU a call and cores; the top cluster's, and the rest of the \
            machine's (this process, the kernel, anyone else), in cores; the disk's busy share and flushes a second; \
            the commands a group commit carried, over all servers and shards; the statements the shards ran a command.
            """)
        print(
            "  phase              N   rate/s   ×\(baselineCount)     (rounds)      p99 ms   servers: ms (used, least, held)   PostgreSQL: ms (used, least, held)   load: ms, cores   top    rest   disk, flushes/s   a group   statements"
        )
        var rows: [String] = []
        for (name, _) in BenchShards.phases {
            guard let base = outcomes["\(baselineCount)/\(name)"] else { continue }
            let baseline = BudgetedOutcome.median(base).rate
            for n in counts.sorted() {
                guard let runs = outcomes["\(n)/\(name)"] else { continue }
                let m = BudgetedOutcome.median(runs)
                let own = zip(runs, base).map { $0.rate / $1.rate }
                let range = String(format: "%.2f–%.2f", own.min() ?? 0, own.max() ?? 0)
                print(
                    String(
                        format:
                            "  %@ %d %8.0f   %5.2f  (%@)  %7.1f   %5.2f (%.2f, %.2f, %.2f)         %5.2f (%.2f, %.2f, %.2f)            %.2f, %.2f        %.2f   %.2f   %.2f, %.0f   %.1f   %.1f",
                        (n == counts.sorted().first ? name : "").padding(toLength: 18, withPad: " ", startingAt: 0), n, m.rate,
                        m.rate / baseline, range.padding(toLength: 9, withPad: " ", startingAt: 0), m.p99, m.serverPerCall, m.serverUsed,
                        m.serverLeast, m.serverThrottled, m.postgresPerCall, m.postgresUsed, m.postgresLeast, m.postgresThrottled,
                        m.loadPerCall, m.loadCores, m.topCores,
                        m.restCores, m.diskBusy, m.flushes, m.appendsPerGroup, m.statementsPerCall))
                rows.append(m.csvRow(phase: name, baseline: baseline))
            }
        }
        print("")
        print("  with nothing to do (views caught up, no load, \(Self.idleSeconds) s), medians, in cores a group:")
        for n in counts.sorted() {
            let idle = measured.idle[n] ?? []
            print(
                String(
                    format: "    %d shard%@: a server %.3f, a PostgreSQL cluster %.3f, the top cluster %.3f", n, n == 1 ? "" : "s",
                    Stats.median(idle.map(\.server)), Stats.median(idle.map(\.postgres)), Stats.median(idle.map(\.top))))
        }
        if let most = counts.max(), most != baselineCount { statementsBreakdown(outcomes, from: baselineCount, to: most) }
        checkTargets(outcomes, baselineCount: baselineCount)
        if let csv {
            let text = ([BudgetedOutcome.csvHeader] + rows).joined(separator: "\n") + "\n"
            do {
                try text.write(toFile: csv, atomically: true, encoding: .utf8)
                print("wrote \(csv) (scripts/plot-shards \(csv) docs/shards.png draws it)")
            } catch {
                print("warning: could not write \(csv): \(error)")
            }
        }
    }

    /// For starts and highlights, the statements whose calls a command changed most from `low`
    /// shards to `high` (medians of the rounds): what a command costs more of on more shards.
    func statementsBreakdown(_ outcomes: [String: [BudgetedOutcome]], from low: Int, to high: Int) {
        print("")
        print("  statements the shards ran a command (pg_stat_statements, medians), \(low) shard → \(high), the 6 that changed most:")
        for name in ["starts", "highlights"] {
            guard let a = outcomes["\(low)/\(name)"], let b = outcomes["\(high)/\(name)"] else { continue }
            let (before, after) = (BudgetedOutcome.median(a), BudgetedOutcome.median(b))
            print(String(format: "    %@: %.2f → %.2f a command", name, before.statementsPerCall, after.statementsPerCall))
            let change = { (key: String) in abs((after.statements[key] ?? 0) - (before.statements[key] ?? 0)) }
            for key in Set(before.statements.keys).union(after.statements.keys).sorted(by: { change($0) > change($1) }).prefix(6) {
                print(
                    String(
                        format: "      %6.3f → %6.3f  %@", before.statements[key] ?? 0, after.statements[key] ?? 0, String(key.prefix(120)))
                )
            }
        }
    }

    /// Issue 68's targets: 2 shards at least 1.8× one shard and 3 shards at least 2.6×, for
    /// starts and highlights (ratios of the medians).
    func checkTargets(_ outcomes: [String: [BudgetedOutcome]], baselineCount: Int) {
        guard baselineCount == 1 else { return }
        print("")
        for (n, target) in [(2, 1.8), (3, 2.6)] {
            for name in ["starts", "highlights"] {
                guard let base = outcomes["1/\(name)"], let runs = outcomes["\(n)/\(name)"] else { continue }
                let ratio = BudgetedOutcome.median(runs).rate / BudgetedOutcome.median(base).rate
                print(
                    String(
                        format: "  target: %@ on %d shards ≥ %.1f× one shard: %.2f× %@", name, n, target, ratio,
                        ratio >= target ? "(holds)" : "(does not hold)"))
            }
        }
    }
}
