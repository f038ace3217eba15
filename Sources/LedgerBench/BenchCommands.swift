import ArgumentParser
import Foundation
import LedgerApp
import LedgerConfiguration
import LedgerDomain
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import Logging
import PostgresNIO

/// The commands apps send most, over HTTP, each beside its floor measured in the same run:
/// pgbench's single-row inserts, a bare append, and an HTTP exchange that does nothing.
struct BenchCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commands",
        abstract:
            "Starts, highlights, participant adds and proofs over HTTP beside pgbench, a bare append and the HTTP floor (rate, p50/p99, CPU per call: server, PostgreSQL, load).",
        discussion: """
            A ledger runs in this process (the services of `ledger serve`) on a throwaway embedded \
            PostgreSQL or --database-url; the load comes from a separate `ledger-bench load` process \
            per phase, so this process's CPU is the server's. Each client is its own account on its \
            own connection. Phases: GET /health (the HTTP floor); a command's exchange with no command \
            (a start refused 400 before any database work: the token checked, the body read, a JSON \
            answer); starts; highlights on the client's \
            own collaboration; participant adds (3 identities a call); proofs (a challenge and its \
            signed proof) at 16 clients and at 1. A command's floor is one exchange plus one bare \
            append, and with the read every command makes before it decides (its caller's pseudonym \
            or its stream's state), one exchange plus one read and one bare append; a proof's is \
            two exchanges, one ECDSA verify on the machine's cores, one \
            single-row insert (the challenge) and one bare append. Starts are also run in this \
            process with no HTTP (16 tasks calling the command), which splits a start's cost between \
            the command and the exchange.
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Rounds; medians are reported.") var rounds = 3
    @Option(help: "Seconds per phase.") var seconds = 3.0
    @Option(help: "LEDGER_FOLLOW_INTERVAL of the ledger under test, in seconds (default: the setting's default).")
    var followInterval: String?
    @Option(
        name: .customLong("phases"),
        help: "Only these phases, by load name (health and exchange always run: the floors need them), e.g. adds,proofs.")
    var onlyPhases: String?
    @Flag(
        help:
            "Print each phase's top statements per call (pg_stat_statements; the server given by --database-url must preload it).")
    var statements = false

    /// The phases, in order: (name in the summary, load phase, clients).
    static let phases: [(String, LoadPlan.Phase, Int)] = [
        ("HTTP floor: GET /health, 16 clients", .health, 16),
        ("a command's exchange, 16 clients", .exchange, 16), ("starts, 16 clients", .starts, 16),
        ("highlights, 16 clients", .highlights, 16), ("participant adds, 16 clients", .adds, 16),
        ("proofs, 16 clients", .proofs, 16), ("starts, 1 client", .starts, 1), ("proofs, 1 client", .proofs, 1),
        ("read-your-writes, 1 client", .readback, 1),
    ]

    func run() async throws {
        let quiet = Logs.quiet()
        let pgbench = try Pgbench.path()
        print("ledger bench commands: \(rounds) rounds of \(seconds) s a phase; load from a separate process (`ledger-bench load`)")
        var floors: [String: [Double]] = [:]
        var outcomes: [String: [LoadProcess.Outcome]] = [:]
        let (rounds, seconds) = (rounds, seconds)
        // Read as the setting is, so its range and parsing are the setting's own.
        let configuration = try LedgerConfiguration(environment: followInterval.map { [Setting.followInterval.variable: $0] } ?? [:])
        print("  the ledger's LEDGER_FOLLOW_INTERVAL: \(configuration.followInterval)")
        let chosen = try Self.chosen(onlyPhases)
        let statements = statements
        try await target.run(logger: quiet) { [configuration] settings in
            if statements { try await ShardStatements.install(settings, logger: quiet) }
            (floors, outcomes) = try await LocalLedger.run(settings, logger: quiet, configuration: configuration, maxConnections: 60) {
                ledger in
                var floors: [String: [Double]] = [:]
                var outcomes: [String: [LoadProcess.Outcome]] = [:]
                try await Pgbench.createTable(ledger.client)
                let store = EventStore(client: ledger.client, logger: quiet)
                for round in 1...rounds {
                    floors["pgbench-1", default: []].append(try await Pgbench.rate(pgbench, settings, clients: 1, seconds: seconds))
                    floors["pgbench-16", default: []].append(try await Pgbench.rate(pgbench, settings, clients: 16, seconds: seconds))
                    let (append, _, _) = try await BenchAppend.appendRate(store, writers: 16, batch: 1, tag: "c\(round)", seconds: seconds)
                    floors["append-16", default: []].append(append)
                    // The same with the read every command makes before it decides: its caller's
                    // pseudonym (the erasable mapping) or its stream's state, at the database's time.
                    let subjects = Subjects(store: store)
                    let (readAppend, _, _) = try await BenchAppend.appendRate(
                        store, writers: 16, batch: 1, tag: "f\(round)", seconds: seconds
                    ) { w in _ = try await subjects.pseudonym(for: "floor-\(round)-\(w)") }
                    floors["read-append-16", default: []].append(readAppend)
                    floors["pgbench-read-16", default: []].append(
                        try await Pgbench.rate(pgbench, settings, clients: 16, seconds: seconds, script: .readInsert))
                    floors["ecdsa", default: []].append(BenchVerify.rawVerifyRate(seconds: 1))
                    let commands = CollaborationCommands(store: store, publicBaseURL: "https://bench.example")
                    let (startRate, startCPU) = try await Self.inProcessStarts(commands, clients: 16, tag: "r\(round)", seconds: seconds)
                    floors["starts-inprocess", default: []].append(startRate)
                    floors["starts-inprocess-cpu", default: []].append(startCPU.machine ?? 0)
                    try await Self.caughtUp(ledger.client, logger: quiet)
                    var line =
                        "  round \(round): pgbench \(Int(floors["pgbench-1"]!.last!))/\(Int(floors["pgbench-16"]!.last!)), append \(Int(append))"
                    for (name, phase, clients) in Self.phases where chosen.contains(phase) {
                        var tokens: [String] = []
                        for c in 0..<clients {
                            tokens.append(try await ledger.authority.issue(account: "\(phase)-\(clients)-\(round)-\(c)"))
                        }
                        // The recipients' collaborations have an owner of their own (proofs only).
                        let owner = phase == .proofs ? try await ledger.authority.issue(account: "owner-\(clients)-\(round)") : nil
                        let outcome = try await LoadProcess.run(
                            LoadPlan(
                                baseURL: ledger.baseURL.absoluteString, phase: phase, seconds: seconds, tokens: tokens, ownerToken: owner)
                        ) {
                            try await Self.caughtUp(ledger.client, logger: quiet)
                            if statements { try await ShardStatements.reset([settings], logger: quiet) }
                        }
                        outcomes[name, default: []].append(outcome)
                        if statements {
                            let costs = try await ShardStatements.costs([settings], logger: quiet)
                            Self.printStatements(name, calls: outcome.calls, costs)
                        }
                        line += ", \(phase)@\(clients) \(Int(outcome.rate))"
                    }
                    print(line)
                }
                return (floors, outcomes)
            }
        }
        Self.summarise(rounds: rounds, floors: floors.mapValues(Stats.median), outcomes: outcomes)
    }

    /// A phase's statements by time, per call of the phase (`--statements`): where its
    /// PostgreSQL time goes, the projectors' and checkpointer's steps included.
    static func printStatements(_ phase: String, calls: Int, _ costs: [String: (calls: Double, milliseconds: Double)]) {
        let n = Double(max(calls, 1))
        let total = costs.values.reduce(0) { $0 + $1.milliseconds } / n
        print(String(format: "    %@: %d calls, PostgreSQL statement time %.3f ms a call", phase, calls, total))
        for (query, cost) in costs.sorted(by: { $0.value.milliseconds > $1.value.milliseconds }).prefix(12) {
            print(String(format: "      %7.3f ms %6.2f× %@", cost.milliseconds / n, cost.calls / n, String(query.prefix(110))))
        }
    }

    /// The load phases `--phases` names (all when nil), with the two the floors need.
    static func chosen(_ list: String?) throws -> Set<LoadPlan.Phase> {
        guard let list else { return Set(LoadPlan.Phase.allCases) }
        var chosen: Set<LoadPlan.Phase> = [.health, .exchange]
        for name in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let phase = LoadPlan.Phase(rawValue: name) else {
                throw ValidationError(
                    "--phases: no phase \(name); the phases are \(LoadPlan.Phase.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            chosen.insert(phase)
        }
        return chosen
    }

    /// Waits (`within` at most) until every projection has folded the log's head, so the work an
    /// earlier phase or a set-up left behind is not counted in the next phase.
    static func caughtUp(_ client: PostgresClient, logger: Logger, within limit: Duration = .seconds(60)) async throws {
        try await LoadProcess.poll("the projections caught up", within: limit, every: .milliseconds(20)) {
            try await ProjectionQueries.status(client: client, logger: logger).allSatisfy { $0.lagEvents == 0 }
        }
    }

    /// Starts with no HTTP: `clients` tasks in this process calling `CollaborationCommands.start`
    /// (pseudonym, commitments, the grouped append with its kept values), the views kept current
    /// as in a server. With the HTTP phase, it splits a start's cost between the command and the
    /// exchange.
    static func inProcessStarts(_ commands: CollaborationCommands, clients: Int, tag: String, seconds: Double) async throws -> (
        Double, CPUTime.PerOperation
    ) {
        let clock = ContinuousClock()
        let cpu = CPUTime.now()
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for c in 0..<clients {
                group.addTask {
                    var n = 0
                    let caller = Caller(account: "inproc-\(tag)-\(c)")
                    while clock.now < deadline {
                        _ = try await commands.start(
                            StartCollaboration(
                                localIdentifier: "doc-\(n)", title: "Bench plan \(c)-\(n)", initiatorHandle: "bench-\(c)@example.com",
                                initiatorName: "Bench \(c)"),
                            caller: caller, idempotencyKey: nil, requestId: UUID().uuidString)
                        n += 1
                    }
                    return n
                }
            }
            return try await group.reduce(0, +)
        }
        return (Double(total) / (clock.now - start).seconds, CPUTime.since(cpu, operations: total))
    }

    static func summarise(rounds: Int, floors m: [String: Double], outcomes: [String: [LoadProcess.Outcome]]) {
        let (pg1, pg16, append, ecdsa) = (m["pgbench-1"]!, m["pgbench-16"]!, m["append-16"]!, m["ecdsa"]!)
        let http = Stats.median(outcomes[phases[0].0]!.map(\.rate))
        // Work that shares the machine's cores adds up in time: a floor's rate is one over the sum.
        let commandFloor = 1 / (1 / http + 1 / append)
        let withRead = 1 / (1 / http + 1 / m["read-append-16"]!)
        // The same with a command's own exchange (its token and body) in place of GET /health.
        let exchange = Stats.median(outcomes[phases[1].0]!.map(\.rate))
        let ownFloor = 1 / (1 / exchange + 1 / append)
        let ownWithRead = 1 / (1 / exchange + 1 / m["read-append-16"]!)
        let proofFloor = 1 / (2 / http + 1 / (ecdsa * Double(CPUTime.cores)) + 1 / pg16 + 1 / append)
        print("")
        print("medians of \(rounds) rounds")
        print(String(format: "  pgbench single-row inserts, 1 client     %8.0f tx/s", pg1))
        print(String(format: "  pgbench single-row inserts, 16 clients   %8.0f tx/s", pg16))
        print(String(format: "  bare append in process, 16 writers       %8.0f events/s   ×pgbench@16 %.2f", append, append / pg16))
        print(
            String(
                format: "  pgbench: a read, then an insert, 16 clients %6.0f tx/s     ×pgbench@16 %.2f", m["pgbench-read-16"]!,
                m["pgbench-read-16"]! / pg16))
        print(
            String(
                format: "  a read, then a bare append, 16 writers   %8.0f /s         ×pgbench@16 %.2f", m["read-append-16"]!,
                m["read-append-16"]! / pg16))
        print(
            String(
                format: "  starts in process, 16 tasks              %8.0f /s   ×pgbench@16 %.2f  machine CPU %.2f ms",
                m["starts-inprocess"]!, m["starts-inprocess"]! / pg16, m["starts-inprocess-cpu"]!))
        print(String(format: "  raw ECDSA P-256 verify, one core         %8.0f verifies/s", ecdsa))
        print(
            String(
                format: "  a command's floor (exchange + append)    %8.0f /s         ×pgbench@16 %.2f", commandFloor, commandFloor / pg16))
        print(
            String(
                format: "  the same with its read (exchange + read + append) %8.0f /s   ×pgbench@16 %.2f", withRead, withRead / pg16))
        print(
            String(
                format: "  a command's own exchange + append (no read)       %8.0f /s   ×pgbench@16 %.2f", ownFloor, ownFloor / pg16))
        print(
            String(
                format: "  a command's own exchange + read + append          %8.0f /s   ×pgbench@16 %.2f", ownWithRead,
                ownWithRead / pg16))
        print(
            String(
                format: "  a proof's floor (2 exchanges, verify, insert, append) %8.0f /s   ×pgbench@16 %.2f", proofFloor, proofFloor / pg16
            ))
        print("")
        print(
            "  phase (load from its own process)       rate   p50/p99 ms   CPU per call in ms: machine (server, PostgreSQL, load)   ratios")
        for (name, phase, clients) in phases {
            guard let runs = outcomes[name] else { continue }
            let rate = Stats.median(runs.map(\.rate))
            let machine = runs.compactMap(\.machine)
            let postgres = runs.compactMap(\.postgres)
            let baseline = clients == 1 ? pg1 : pg16
            var ratios = String(format: "×pgbench@%d %.2f", clients, rate / baseline)
            switch phase {
            case .health, .exchange, .readback: ratios = ""
            case _ where clients == 1: break  // the floors are 16 clients'
            case .proofs: ratios += String(format: "   ×floor %.2f", rate / proofFloor)
            case .starts, .highlights, .adds:
                ratios += String(format: "   ×floor %.2f   ×floor with read %.2f", rate / commandFloor, rate / withRead)
            }
            print(
                String(
                    format: "  %@ %8.0f /s   p50 %6.1f ms   p99 %6.1f ms   machine CPU %@ (server %.2f, PostgreSQL %@, load %.2f)   %@",
                    name.padding(toLength: 36, withPad: " ", startingAt: 0), rate, Stats.median(runs.map(\.p50)),
                    Stats.median(runs.map(\.p99)), machine.isEmpty ? "?" : String(format: "%.2f ms", Stats.median(machine)),
                    Stats.median(runs.map(\.server)), postgres.isEmpty ? "?" : String(format: "%.2f", Stats.median(postgres)),
                    Stats.median(runs.map(\.load)), ratios))
        }
        // Issue 68: an event alone should cost about what it costs in company.
        func machine(_ name: String) -> Double? {
            let runs = outcomes[name]?.compactMap(\.machine) ?? []
            return runs.isEmpty ? nil : Stats.median(runs)
        }
        for (kind, one, sixteen) in [
            ("starts", "starts, 1 client", "starts, 16 clients"), ("proofs", "proofs, 1 client", "proofs, 16 clients"),
        ] {
            guard let one = machine(one), let sixteen = machine(sixteen) else { continue }
            print(String(format: "  machine CPU per call, 1 client ÷ 16 clients: %@ %.2f (target 1.5)", kind, one / sixteen))
        }
    }
}
