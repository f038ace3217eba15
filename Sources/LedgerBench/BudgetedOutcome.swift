import Foundation

/// One phase of `ledger-bench shards --budget` on N shards: what the load process measured, and
/// where the CPU went meanwhile, read from the groups (`CPUGroup`), the load process's own count
/// and the whole machine (`MachineSample`). CPU figures are in cores (CPU seconds a second) or
/// milliseconds a call.
struct BudgetedOutcome: Sendable {
    /// Shards (and servers).
    var shards: Int
    var rate: Double
    var p50: Double
    var p99: Double
    /// CPU a call in all the servers' groups, and in all the shards' PostgreSQL groups.
    var serverPerCall: Double
    var postgresPerCall: Double
    /// Cores used by the busiest server group and the busiest PostgreSQL group, as a share of
    /// one group's budget (1: it ran out of quota all along).
    var serverUsed: Double
    var postgresUsed: Double
    /// The same of the least busy group: far below the busiest, the work is not spread evenly
    /// (a worker's lease held by one server for every shard, one shard holding more of the load).
    var serverLeast: Double
    var postgresLeast: Double
    /// The share of CFS periods in which a group ran out of its quota, the groups' mean.
    var serverThrottled: Double
    var postgresThrottled: Double
    /// The load generator: its CPU a call and its cores.
    var loadPerCall: Double
    var loadCores: Double
    /// The top database's cluster (unbudgeted, counted) and everything outside the groups and
    /// the load process (this process, the kernel, anyone else on the machine), in cores.
    var topCores: Double
    var restCores: Double
    var machineCores: Double
    /// The disk every cluster's WAL goes to: the share of the time it was busy, flushes a second.
    var diskBusy: Double
    var flushes: Double
    /// Commands (appends) a group commit carried, over every server and shard: each server
    /// groups its own appends to each shard, so N servers on N shards split a shard's groups N ways.
    var appendsPerGroup: Double
    /// Each statement the shards ran, in calls a command (`ShardStatements`), and their sum.
    var statements: [String: Double] = [:]
    var statementsPerCall: Double { statements.values.reduce(0, +) }

    /// A layout with nothing to do (its views caught up, no load): what its groups use anyway, in
    /// cores a group (the servers' mean, the PostgreSQL groups' mean) and the top cluster's.
    struct Idle: Sendable {
        var server: Double
        var postgres: Double
        var top: Double

        init(from a: Snapshot, to b: Snapshot) {
            let wall = b.machine.since(a.machine).seconds
            func mean(_ x: [CPUGroup.Sample], _ y: [CPUGroup.Sample]) -> Double {
                zip(x, y).map { ($1.seconds - $0.seconds) / wall }.reduce(0, +) / Double(max(x.count, 1))
            }
            (server, postgres, top) = (mean(a.servers, b.servers), mean(a.postgres, b.postgres), (b.top.seconds - a.top.seconds) / wall)
        }
    }

    /// The groups of one layout and the machine, read at one instant.
    struct Snapshot: Sendable {
        var servers: [CPUGroup.Sample]
        var postgres: [CPUGroup.Sample]
        var top: CPUGroup.Sample
        var machine: MachineSample

        static func now(servers: [CPUGroup], postgres: [CPUGroup], top: CPUGroup) -> Snapshot {
            Snapshot(servers: servers.map { $0.sample() }, postgres: postgres.map { $0.sample() }, top: top.sample(), machine: .now())
        }
    }

    /// `serverBudget`: a server group's budget, where it is not `budget` (one server for N shards).
    init(
        shards: Int, budget: Double, serverBudget: Double? = nil, load: LoadProcess.Outcome, from a: Snapshot, to b: Snapshot,
        appendsPerGroup: Double
    ) {
        let machine = b.machine.since(a.machine)
        let wall = machine.seconds
        let calls = Double(max(load.calls, 1))
        func seconds(_ x: [CPUGroup.Sample], _ y: [CPUGroup.Sample]) -> [Double] { zip(x, y).map { $1.seconds - $0.seconds } }
        func throttled(_ x: [CPUGroup.Sample], _ y: [CPUGroup.Sample]) -> Double {
            let shares = zip(x, y).map { a, b in b.periods > a.periods ? (b.throttled - a.throttled) / (b.periods - a.periods) : 0 }
            return shares.reduce(0, +) / Double(max(shares.count, 1))
        }
        let servers = seconds(a.servers, b.servers)
        let postgres = seconds(a.postgres, b.postgres)
        self.shards = shards
        (rate, p50, p99) = (load.rate, load.p50, load.p99)
        serverPerCall = servers.reduce(0, +) * 1000 / calls
        postgresPerCall = postgres.reduce(0, +) * 1000 / calls
        serverUsed = (servers.max() ?? 0) / wall / (serverBudget ?? budget)
        postgresUsed = (postgres.max() ?? 0) / wall / budget
        serverLeast = (servers.min() ?? 0) / wall / (serverBudget ?? budget)
        postgresLeast = (postgres.min() ?? 0) / wall / budget
        serverThrottled = throttled(a.servers, b.servers)
        postgresThrottled = throttled(a.postgres, b.postgres)
        loadPerCall = load.load
        loadCores = load.load * load.rate / 1000
        topCores = (b.top.seconds - a.top.seconds) / wall
        machineCores = machine.cores ?? 0
        restCores = max(0, machineCores - (servers + postgres).reduce(0, +) / wall - topCores - loadCores)
        diskBusy = machine.diskBusy
        flushes = machine.flushes
        self.appendsPerGroup = appendsPerGroup
    }

    /// Each figure the median of `runs`' (one layout, one phase, one per round).
    static func median(_ runs: [BudgetedOutcome]) -> BudgetedOutcome {
        var m = runs[0]
        func med(_ key: KeyPath<BudgetedOutcome, Double>) -> Double { Stats.median(runs.map { $0[keyPath: key] }) }
        (m.rate, m.p50, m.p99) = (med(\.rate), med(\.p50), med(\.p99))
        (m.serverPerCall, m.postgresPerCall, m.serverUsed, m.postgresUsed) = (
            med(\.serverPerCall), med(\.postgresPerCall), med(\.serverUsed), med(\.postgresUsed)
        )
        (m.serverLeast, m.postgresLeast) = (med(\.serverLeast), med(\.postgresLeast))
        (m.serverThrottled, m.postgresThrottled, m.loadPerCall, m.loadCores) = (
            med(\.serverThrottled), med(\.postgresThrottled), med(\.loadPerCall), med(\.loadCores)
        )
        (m.topCores, m.restCores, m.machineCores, m.diskBusy, m.flushes, m.appendsPerGroup) = (
            med(\.topCores), med(\.restCores), med(\.machineCores), med(\.diskBusy), med(\.flushes), med(\.appendsPerGroup)
        )
        let keys = Set(runs.flatMap(\.statements.keys))
        m.statements = Dictionary(uniqueKeysWithValues: keys.map { key in (key, Stats.median(runs.map { $0.statements[key] ?? 0 })) })
        return m
    }

    /// The CSV columns `scripts/plot-shards` reads (`csvRow`, in this order).
    static let csvHeader =
        "phase,shards,rate,ratio,p99_ms,server_ms,postgres_ms,server_used,postgres_used,server_least,postgres_least,server_throttled,postgres_throttled,load_ms,load_cores,top_cores,rest_cores,machine_cores,disk_busy,flushes_per_s,appends_per_group,statements_per_call"

    func csvRow(phase: String, baseline: Double) -> String {
        let figures = [
            rate, rate / baseline, p99, serverPerCall, postgresPerCall, serverUsed, postgresUsed, serverLeast, postgresLeast,
            serverThrottled, postgresThrottled,
            loadPerCall, loadCores, topCores, restCores, machineCores, diskBusy, flushes, appendsPerGroup, statementsPerCall,
        ]
        return ([phase, "\(shards)"] + figures.map { String(format: "%.4f", $0) }).joined(separator: ",")
    }
}
