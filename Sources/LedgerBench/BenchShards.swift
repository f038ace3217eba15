import ArgumentParser
import Foundation
import LedgerApp
import LedgerConfiguration
import LedgerPostgres
import LedgerTelemetry
import LedgerTokens
import Logging

/// Commands over HTTP on one database, on one shard behind the shard router, and on two shards,
/// in one run (issue 49): what routing costs, and what a second shard gives on the same machine.
struct BenchShards: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shards",
        abstract:
            "Starts, highlights, participant adds and proofs over HTTP on one database, on 1 shard and on 2 shards (ratios in one run).",
        discussion: """
            Each round runs the three layouts in turn (the order rotating from round to round), each a \
            fresh `ledger serve` in this process: on the bench database alone; on one shard database \
            behind the shard router (PL/Proxy's cluster read, one router per shard, `ShardRouter` in \
            front); and on two shard databases of the same cluster. The load comes from a separate \
            `ledger-bench load` process per phase, 16 clients each. Every layout has the same 40 \
            connections in all (20 a shard on two). "1 shard ÷ one database" is the routing's cost; \
            "2 shards ÷ 1 shard" what a second shard gives when both share this machine's cores and \
            one PostgreSQL server.

            With --budget CPU (cgroup v1, as root): N = --counts shards instead, each its own \
            PostgreSQL cluster, and N `ledger serve` processes (the `ledger` binary beside this one) \
            on all of them, each cluster and each server in a cgroup v1 group of CPU cores; \
            --clients-per-shard × N clients spread over the servers. Each N is printed beside N = 1 \
            of the same run, with where the CPU went: each group's use of its budget, the load \
            generator's, the top database's (on a cluster with no quota) and the machine's, and the \
            disk's. scripts/plot-shards draws --csv's table.
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Rounds; medians are reported.") var rounds = 3
    @Option(help: "Seconds per phase.") var seconds = 3.0
    @Option(help: "Cores each shard's PostgreSQL and each server may use (cgroup v1 quota): measure N shards at equal budgets.")
    var budget: Double?
    @Option(help: "With --budget: the shard counts, each beside the least.") var counts = "1,2,3"
    @Option(help: "With --budget: clients a shard (the load grows with N).") var clientsPerShard = 16
    @Option(help: "With --budget: write the medians there as CSV, for scripts/plot-shards.") var csv: String?
    @Flag(help: "With --budget: one `ledger serve` on the N shards in a group of N budgets, instead of N servers of one budget.")
    var oneServer = false

    /// --counts as numbers.
    var shardCounts: [Int] { counts.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func validate() throws {
        guard let budget else { return }
        guard target.databaseURL == nil else {
            throw ValidationError("--budget runs PostgreSQL clusters of its own, one a shard: drop --database-url")
        }
        guard budget >= 0.01, budget <= Double(CPUTime.cores) else {
            throw ValidationError("--budget is cores a group, from 0.01 to this machine's \(CPUTime.cores)")
        }
        let parsed = shardCounts
        guard !parsed.isEmpty, parsed.count == counts.split(separator: ",").count, parsed.allSatisfy({ (1...8).contains($0) }),
            Set(parsed).count == parsed.count
        else { throw ValidationError("--counts is a comma-separated list of distinct shard counts from 1 to 8, such as 1,2,3") }
        guard clientsPerShard >= 1, rounds >= 1, seconds > 0 else {
            throw ValidationError("--clients-per-shard and --rounds are at least 1, --seconds above 0")
        }
    }

    /// Layouts: (name, shards; nil: one database, no router).
    static let layouts: [(String, Int?)] = [("one database", nil), ("1 shard", 1), ("2 shards", 2)]
    static let phases: [(String, LoadPlan.Phase)] = [
        ("starts", .starts), ("highlights", .highlights), ("participant adds", .adds), ("proofs", .proofs),
    ]

    func run() async throws {
        if let budget {
            return try await BudgetedShards(
                budget: budget, counts: shardCounts, rounds: rounds, seconds: seconds, clientsPerShard: clientsPerShard, csv: csv,
                oneServer: oneServer,
                binaries: Setting.pgBin.value()
            ).run()
        }
        let quiet = Logs.quiet()
        print("ledger bench shards: \(rounds) rounds of \(seconds) s a phase, 16 clients; load from a separate process")
        var outcomes: [String: [LoadProcess.Outcome]] = [:]
        let (rounds, seconds) = (rounds, seconds)
        try await target.run(logger: quiet) { settings in
            for round in 1...rounds {
                var line = "  round \(round):"
                for turn in 0..<Self.layouts.count {
                    let (layout, shards) = Self.layouts[(turn + round - 1) % Self.layouts.count]
                    let measured = try await LocalLedger.run(settings, logger: quiet, maxConnections: 40, shards: shards) {
                        ledger in
                        var measured: [(String, LoadProcess.Outcome)] = []
                        for (name, phase) in Self.phases {
                            let tokens = try await (0..<16).asyncMap {
                                try await ledger.authority.issue(account: "\(phase)-\(round)-\($0)")
                            }
                            let owner = phase == .proofs ? try await ledger.authority.issue(account: "owner-\(round)") : nil
                            let plan = LoadPlan(
                                baseURL: ledger.baseURL.absoluteString, phase: phase, seconds: seconds, tokens: tokens, ownerToken: owner)
                            measured.append((name, try await LoadProcess.run(plan) { try await Self.caughtUp(ledger, logger: quiet) }))
                        }
                        return measured
                    }
                    for (name, outcome) in measured {
                        outcomes["\(layout)/\(name)", default: []].append(outcome)
                        line += " \(layout) \(name) \(Int(outcome.rate));"
                    }
                }
                print(line)
            }
        }
        Self.summarise(rounds: rounds, outcomes: outcomes)
    }

    /// Every shard's projections (or the one database's) caught up.
    static func caughtUp(_ ledger: LocalLedger.Running, logger: Logger) async throws {
        guard !ledger.shards.isEmpty else { return try await BenchCommands.caughtUp(ledger.client, logger: logger) }
        for shard in ledger.shards {
            try await shard.withClient(logger: logger) { try await BenchCommands.caughtUp($0, logger: logger) }
        }
    }

    static func summarise(rounds: Int, outcomes: [String: [LoadProcess.Outcome]]) {
        print("")
        print("medians of \(rounds) rounds: rate /s, and CPU ms a call: machine (server, PostgreSQL)")
        print(
            "  phase              one database                1 shard                     2 shards                    1 shard ÷ one db   2 shards ÷ 1 shard"
        )
        for (name, _) in phases {
            let figures = layouts.map { layout, _ in
                let runs = outcomes["\(layout)/\(name)"] ?? []
                let cell = String(
                    format: "%6.0f %.2f (%.2f, %.2f)", Stats.median(runs.map(\.rate)), Stats.median(runs.compactMap(\.machine)),
                    Stats.median(runs.map(\.server)), Stats.median(runs.compactMap(\.postgres)))
                return (Stats.median(runs.map(\.rate)), cell.padding(toLength: 28, withPad: " ", startingAt: 0))
            }
            print(
                String(
                    format: "  %@ %@%@%@%.2f               %.2f", name.padding(toLength: 18, withPad: " ", startingAt: 0), figures[0].1,
                    figures[1].1, figures[2].1, figures[1].0 / figures[0].0, figures[2].0 / figures[1].0))
        }
    }
}

extension Range where Bound == Int {
    /// Each element's `transform`, in order, one after the other.
    func asyncMap<T>(_ transform: (Int) async throws -> T) async throws -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
