import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import Logging
import TransparencyLog

/// `ledger-bench shards --budget CPU` (issue 68): N shards, each its own PostgreSQL cluster, and
/// N `ledger serve` processes on all of them, each cluster and each server in a cgroup v1 group
/// of the same quota; the load (`clientsPerShard` × N clients) spread over the servers
/// round-robin. Every figure is printed beside N = 1's of the same run.
///
/// The clusters start once and stay; each layout (N, in a round) gets fresh databases on the
/// first N of them and a fresh top database (the shard map and the top log, on an unbudgeted
/// cluster of its own whose CPU is counted), defined by the shipped `ledger shards init`, and
/// servers started for it and stopped after it. The groups are removed at the end, on failure too.
struct BudgetedShards {
    var budget: Double
    var counts: [Int]
    var rounds: Int
    var seconds: Double
    var clientsPerShard: Int
    var csv: String?
    /// One `ledger serve` on the N shards, in a group of N budgets, instead of N servers of one
    /// each: the same CPU, without servers that each follow every shard.
    var oneServer = false
    /// The PostgreSQL binaries to prefer (`LEDGER_PG_BIN`).
    var binaries: String?

    /// The log's name in its checkpoints, which the shared signing key carries.
    static let origin = "bench.shards/ledger"

    /// What every layout shares: the clusters, the groups, the deployment's secrets.
    struct Machine: Sendable {
        var ledger: String
        var folder: URL
        /// The top cluster and each shard's cluster, as their owner (one login, one password).
        var top: DatabaseSettings
        var shards: [DatabaseSettings]
        var topGroup: CPUGroup
        var postgresGroups: [CPUGroup]
        var serverGroups: [CPUGroup]
        var authority: TokenAuthority
        /// LEDGER_… settings every `ledger serve` gets (the token secret, the signing key).
        var settings: [String: String]
    }

    /// Every layout's phases, keyed "N/phase", and its idle use by N, each a list in round order.
    struct Measured: Sendable {
        var phases: [String: [BudgetedOutcome]] = [:]
        var idle: [Int: [BudgetedOutcome.Idle]] = [:]
    }

    func run() async throws {
        if let refusal = CPUGroup.refusal() { throw ValidationError(refusal) }
        let ledger = try ServeProcess.executable()
        CPUGroup.removeStale()
        // Errors only: a pool's first lease may come before its run loop, and PostgresNIO warns
        // (and waits) where the bench prints its figures.
        let logger = {
            var logger = Logs.quiet()
            logger.logLevel = .error
            return logger
        }()
        let most = counts.max() ?? 1
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-shards-\(UUID().uuidString.prefix(8))")
        print(
            """
            ledger bench shards --budget \(budget): \(counts.map(String.init).joined(separator: ", ")) shards, each its own PostgreSQL \
            cluster, and \(oneServer ? "one `ledger serve` in a group of N budgets" : "as many `ledger serve`"); each cluster \
            and each server in a cgroup v1 group of \(budget) core \
            (cpu.cfs_quota_us \(Int((budget * Double(CPUGroup.period)).rounded())) per cpu.cfs_period_us \(CPUGroup.period)); \
            \(2 * most) groups at most on \(CPUTime.cores) cores. \(clientsPerShard) clients a shard from one load process, \
            spread over the servers; \(rounds) rounds of \(seconds) s a phase. The top database (map and top log) is on a \
            cluster of its own with no quota, its CPU counted.
            """)
        var groups: [CPUGroup] = []
        var clusters: [EmbeddedPostgres] = []
        var outcome: Result<Measured, any Error>
        do {
            // One owner login and password on every cluster: `ledger serve` reaches each shard
            // with its database URL's login (`ShardConnection`).
            let password = TokenAuthority.randomSecret()
            func start(_ name: String, budget: Double?) async throws -> (DatabaseSettings, CPUGroup) {
                let group = try CPUGroup.make(name, budget: budget)
                groups.append(group)
                let data = folder.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
                FileManager.default.createFile(
                    atPath: data.appendingPathComponent("pg-password").path, contents: Data(password.utf8),
                    attributes: [.posixPermissions: 0o600])
                // The shards' clusters count their statements (`ShardStatements`).
                let extra = budget == nil ? [:] : ShardStatements.serverSettings
                let cluster = EmbeddedPostgres(
                    options: .init(
                        dataDirectory: data, serverSettings: extra.merging(["max_connections": "200"]) { $1 }, database: "postgres",
                        binaries: binaries),
                    logger: logger)
                clusters.append(cluster)
                let settings = try await cluster.start()
                if budget != nil { try await ShardStatements.install(settings, logger: logger) }
                try group.addCluster(pidFile: data.appendingPathComponent("pg/postmaster.pid").path)
                return (settings, group)
            }
            let (top, topGroup) = try await start("top", budget: nil)
            var shards: [DatabaseSettings] = []
            var postgresGroups: [CPUGroup] = []
            var serverGroups: [CPUGroup] = []
            for k in 0..<most {
                let (settings, group) = try await start("postgres-\(k)", budget: budget)
                shards.append(settings)
                postgresGroups.append(group)
                serverGroups.append(try CPUGroup.make("serve-\(k)", budget: budget))
                groups.append(serverGroups.last!)
            }
            let secret = TokenAuthority.randomSecret()
            let key = folder.appendingPathComponent("signing-key")
            FileManager.default.createFile(
                atPath: key.path, contents: Data(try NoteSigner(name: Self.origin).text.utf8), attributes: [.posixPermissions: 0o600])
            let machine = Machine(
                ledger: ledger, folder: folder, top: top, shards: shards, topGroup: topGroup, postgresGroups: postgresGroups,
                serverGroups: serverGroups, authority: try await TokenAuthority(secret: secret),
                settings: [
                    "LEDGER_JWT_SECRET": secret, "LEDGER_SIGNING_KEY_FILE": key.path, "LEDGER_LOG_ORIGIN": Self.origin,
                    "LEDGER_LOG_LEVEL": "warning",
                ])
            outcome = .success(try await measure(machine, logger: logger))
        } catch {
            outcome = .failure(error)
        }
        // Whatever happened: the clusters stop (their processes leave the groups), then the groups go.
        for cluster in clusters { try? await cluster.stop() }
        for group in groups { if let problem = group.remove() { print("warning: \(problem)") } }
        try? FileManager.default.removeItem(at: folder)
        summarise(try outcome.get())
    }

    /// Every round, each N in turn (the order rotating from round to round, so a machine that
    /// speeds up or slows down weighs on every N alike).
    func measure(_ machine: Machine, logger: Logger) async throws -> Measured {
        var outcomes = Measured()
        for round in 1...rounds {
            for turn in counts.indices {
                let n = counts[(turn + round - 1) % counts.count]
                let (measured, idle) = try await layout(n, round: round, machine, logger: logger)
                outcomes.idle[n, default: []].append(idle)
                var line = "  round \(round), \(n) shard\(n == 1 ? "" : "s"):"
                for (name, _) in BenchShards.phases {
                    let o = measured[name]!
                    outcomes.phases["\(n)/\(name)", default: []].append(o)
                    line += String(format: " %@ %.0f/s (load %.2f core)", name, o.rate, o.loadCores)
                    if o.loadCores > 0.8 {
                        print(
                            "  warning: the load generator used \(String(format: "%.2f", o.loadCores)) of a core in \(name): near a core, it may be the bottleneck"
                        )
                    }
                }
                print(line + String(format: "; idle %.3f, %.3f core a server, a cluster", idle.server, idle.postgres))
            }
        }
        return outcomes
    }

    /// One layout: fresh databases, `ledger shards init`, N servers; the phases; then the servers
    /// stopped and the databases dropped, on failure too.
    func layout(_ n: Int, round: Int, _ machine: Machine, logger: Logger) async throws -> (
        [String: BudgetedOutcome], BudgetedOutcome.Idle
    ) {
        let tag = "r\(round)_n\(n)"
        let top = machine.top.with(database: "top_\(tag)")
        let shards = machine.shards.prefix(n).map { $0.with(database: "shard_\(tag)") }
        var servers: [ServeProcess] = []
        let outcome: Result<([String: BudgetedOutcome], BudgetedOutcome.Idle), any Error>
        do {
            try await PostgresAdmin.createDatabaseIfMissing(top.database, on: machine.top, logger: logger)
            try await top.withClient(logger: logger) { _ = try await Migrator(client: $0, logger: logger).migrate() }
            for shard in shards {
                try await PostgresAdmin.createDatabaseIfMissing(shard.database, on: shard.with(database: "postgres"), logger: logger)
            }
            // 1,024 partitions: 16 over 3 shards would give one shard 6 of them, a third more load.
            let cluster = "bench_\(tag)"
            var arguments = ["shards", "init", "--cluster", cluster, "--partitions", "1024"]
            for shard in shards { arguments += ["--shard", "host=\(shard.host) port=\(shard.port) dbname=\(shard.database)"] }
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
            environment[Setting.databaseURL.variable] = top.url(revealPassword: true)
            environment[Setting.logLevel.variable] = "warning"
            try await ProcessRunner.check(machine.ledger, arguments, environment: environment)
            var settings = machine.settings
            settings[Setting.databaseURL.variable] = top.url(revealPassword: true)
            settings[Setting.shardCluster.variable] = cluster
            if oneServer { try machine.serverGroups[0].hold(to: budget * Double(n)) }
            for k in 0..<(oneServer ? 1 : n) {
                let folder = machine.folder.appendingPathComponent("serve-\(tag)-\(k)")
                servers.append(
                    try await ServeProcess.start(machine.ledger, in: machine.serverGroups[k], settings: settings, folder: folder))
            }
            outcome = .success(try await phases(n, tag: tag, servers: servers, shards: shards, machine, logger: logger))
        } catch {
            outcome = .failure(error)
        }
        for server in servers { await server.stop() }
        for database in [top] + shards {
            try? await PostgresAdmin.dropDatabase(database.database, on: database.with(database: "postgres"), logger: logger)
        }
        return try outcome.get()
    }

    /// The phases on one layout's servers, each measured from the moment every shard's views have
    /// caught up with the set-up to the load process's exit; then the layout idle for `idleSeconds`.
    func phases(
        _ n: Int, tag: String, servers: [ServeProcess], shards: [DatabaseSettings], _ machine: Machine, logger: Logger
    ) async throws -> ([String: BudgetedOutcome], BudgetedOutcome.Idle) {
        let (serverGroups, postgresGroups) = (Array(machine.serverGroups.prefix(servers.count)), Array(machine.postgresGroups.prefix(n)))
        func snapshot() -> BudgetedOutcome.Snapshot { .now(servers: serverGroups, postgres: postgresGroups, top: machine.topGroup) }
        func caughtUp() async throws {
            for shard in shards { try await shard.withClient(logger: logger) { try await BenchCommands.caughtUp($0, logger: logger) } }
        }
        // Group commits, from every server's /metrics: read outside the measured window.
        let names: Set<String> = ["ledger_append_group_appends_sum", "ledger_append_group_appends_count"]
        func groups() async -> (appends: Double, groups: Double) {
            var (appends, groups) = (0.0, 0.0)
            for server in servers {
                let figures = await server.metrics(names)
                appends += figures["ledger_append_group_appends_sum"] ?? 0
                groups += figures["ledger_append_group_appends_count"] ?? 0
            }
            return (appends, groups)
        }
        var measured: [String: BudgetedOutcome] = [:]
        for (name, phase) in BenchShards.phases {
            let tokens = try await (0..<(n * clientsPerShard)).asyncMap {
                try await machine.authority.issue(account: "\(phase)-\(tag)-\($0)")
            }
            let owner = phase == .proofs ? try await machine.authority.issue(account: "owner-\(tag)") : nil
            let urls = servers.map(\.url.absoluteString)
            let plan = LoadPlan(
                baseURL: urls[0], phase: phase, seconds: seconds, tokens: tokens, ownerToken: owner, baseURLs: urls)
            var before: (BudgetedOutcome.Snapshot, (appends: Double, groups: Double))?
            let load = try await LoadProcess.run(plan) {
                try await caughtUp()
                let committed = await groups()
                try await ShardStatements.reset(shards, logger: logger)
                before = (snapshot(), committed)
            }
            let after = snapshot()
            let committed = await groups()
            let perGroup = (committed.appends - before!.1.appends) / max(committed.groups - before!.1.groups, 1)
            var outcome = BudgetedOutcome(
                shards: n, budget: budget, serverBudget: budget * Double(n) / Double(servers.count), load: load, from: before!.0,
                to: after, appendsPerGroup: perGroup)
            outcome.statements = try await ShardStatements.calls(shards, logger: logger).mapValues { $0 / Double(max(load.calls, 1)) }
            measured[name] = outcome
        }
        try await caughtUp()
        let start = snapshot()
        try await Task.sleep(for: .seconds(Self.idleSeconds))
        return (measured, BudgetedOutcome.Idle(from: start, to: snapshot()))
    }

    /// How long a layout is watched with nothing to do, once its views have caught up.
    static let idleSeconds = 3.0
}
