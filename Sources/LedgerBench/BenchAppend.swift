import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import Logging
import PostgresNIO
import ServiceLifecycle
import TransparencyLog

struct BenchAppend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "append",
        abstract:
            "Append throughput (1 and 16 writers, batches of 100) next to pgbench single-row inserts on an equivalent table and the log's floor (pgbench locking a head row, inserting an event chained to it and its stream's row, moving the head: one statement on copies of the log's tables), with the checkpointer signing as in `ledger serve`; the lag from an append's acknowledgement to the first checkpoint covering it."
    )

    @OptionGroup var target: BenchTarget
    @Option(help: "Rounds; medians are reported.") var rounds = 3
    @Option(help: "Seconds per measurement.") var seconds = 3.0
    @Option(help: "Concurrent writers of 100-event batches.") var batchWriters = 16
    @Flag(help: "Run without the checkpointer (the log's tree and checkpoints), for an A/B.") var noCheckpointer = false
    @Option(help: "Witnesses (in this process, on loopback) whose quorum (all) must cosign before a checkpoint is published.")
    var witnesses = 0
    @Option(
        help:
            "A backup's WAL receiver beside the cluster (`pg_receivewal --synchronous` through a `ledger_backup_…` slot): none, async, or sync (the synchronous standby)."
    )
    var archive = BenchArchive.none

    func run() async throws {
        let quiet = Logs.quiet()
        try await target.run(logger: quiet) { settings in
            try await measure(settings, logger: quiet)
        }
    }

    private func measure(_ settings: DatabaseSettings, logger: Logger) async throws {
        let pgbench = try Pgbench.path()
        try await settings.withClient(logger: logger, maxConnections: 40) { client in
            try await archive.around(settings, client: client, logger: logger) {
                try await measure(client, settings, pgbench: pgbench, logger: logger)
            }
        }
    }

    private func measure(_ client: PostgresClient, _ settings: DatabaseSettings, pgbench: String, logger: Logger) async throws {
        if noCheckpointer { return try await measurePhases(client, settings, pgbench: pgbench, logger: logger) }
        // As in `ledger serve`: the checkpointer grows the tree and signs while the writers append.
        let hub = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
        let signer = try NoteSigner(name: "bench.local/ledger")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await hub.run() }
            let (policy, witnessServers) = try await BenchWitnesses.start(witnesses, log: signer.verifier, in: &group, logger: logger)
            let witnessClient = policy.map { WitnessClient(policy: $0, tree: LogTree(client: client, logger: logger), logger: logger) }
            group.addTask {
                try await Checkpointer(client: client, signer: signer, events: hub, logger: logger, witnesses: witnessClient).run()
            }
            defer { group.cancelAll() }
            try await measurePhases(client, settings, pgbench: pgbench, logger: logger)
            for server in witnessServers { await server.triggerGracefulShutdown() }
        }
    }

    private func measurePhases(_ client: PostgresClient, _ settings: DatabaseSettings, pgbench: String, logger: Logger) async throws {
        try await Pgbench.createTable(client)
        try await Pgbench.createLogFloorTables(client)
        let store = EventStore(client: client, logger: logger)
        var results: [String: [Double]] = [:]
        var cpu: [String: [CPUTime.PerOperation]] = [:]
        var acknowledged: [(position: Int64, at: Date)] = []
        let phases = [("single-1", 1, 1, "a"), ("single-16", 16, 1, "b"), ("batch-100", batchWriters, 100, "c")]
        print(
            "ledger bench append: \(rounds) rounds of \(seconds)s each on \(settings.host):\(settings.port), checkpointer \(noCheckpointer ? "off" : "on")"
                + (witnesses > 0 ? ", \(witnesses) witnesses" : "") + (archive != .none ? ", archive receiver \(archive.rawValue)" : ""))
        for round in 1...rounds {
            for (name, writers, batch, tag) in phases {
                let (rate, perEvent, acks) = try await Self.appendRate(
                    store, writers: writers, batch: batch, tag: "r\(round)\(tag)", seconds: seconds)
                results[name, default: []].append(rate)
                cpu[name, default: []].append(perEvent)
                if name == "single-16" { acknowledged += acks }
            }
            results["pgbench-1", default: []].append(try await Pgbench.rate(pgbench, settings, clients: 1, seconds: seconds))
            results["pgbench-16", default: []].append(try await Pgbench.rate(pgbench, settings, clients: 16, seconds: seconds))
            results["floor-1", default: []].append(try await Pgbench.logFloorRate(pgbench, settings, client, seconds: seconds))
            print("  round \(round): " + results.keys.sorted().map { "\($0)=\(Int(results[$0]!.last!))" }.joined(separator: " "))
        }
        let m = results.mapValues(Stats.median)
        print("")
        print("medians of \(rounds) rounds (events/s; pgbench: single-row INSERT transactions/s)")
        print(
            "  single-event appends, 1 writer     \(Stats.format(m["single-1"]!))   pgbench 1 client   \(Stats.format(m["pgbench-1"]!))   ratio \(String(format: "%.2f", m["single-1"]! / m["pgbench-1"]!))"
        )
        print(
            "  single-event appends, 16 writers   \(Stats.format(m["single-16"]!))   pgbench 16 clients \(Stats.format(m["pgbench-16"]!))   ratio \(String(format: "%.2f", m["single-16"]! / m["pgbench-16"]!))"
        )
        // What a hash-chained append costs before anything of ours (`Pgbench.Script.logFloor`).
        print(
            String(
                format: "  the log's floor, pgbench  1 client  %8.0f tx/s   ×pgbench %.2f   single-event appends ÷ it %.2f", m["floor-1"]!,
                m["floor-1"]! / m["pgbench-1"]!, m["single-1"]! / m["floor-1"]!))
        print("  batched appends (100/append, \(batchWriters) writers) \(Stats.format(m["batch-100"]!))")
        print("  CPU per event, medians (machine: all processes, PostgreSQL's included; process: this one):")
        for (name, _, _, _) in phases {
            let machine = cpu[name]!.compactMap(\.machine)
            print(
                "    \(name.padding(toLength: 10, withPad: " ", startingAt: 0)) machine "
                    + (machine.isEmpty ? "?" : String(format: "%.4f ms", Stats.median(machine)))
                    + String(format: "   process %.4f ms", Stats.median(cpu[name]!.map(\.process))))
        }
        if !noCheckpointer { try await printCheckpointLag(client, store: store, acknowledged: acknowledged) }
        let verified = try await LogVerification(store: store, tree: LogTree(client: client, logger: logger)).run()
        print(
            "  log verify after the run: \(verified.failure == nil && verified.checkpointFailure == nil ? "OK" : "FAILED") (\(verified.checked) events)"
        )
    }

    /// For every single-event append of the 16-writer phases: the time from its acknowledgement
    /// to the publication of the first checkpoint that covers it (`published_at`, the same
    /// machine's clock): signed, and with witnesses cosigned by their quorum.
    private func printCheckpointLag(_ client: PostgresClient, store: EventStore, acknowledged: [(position: Int64, at: Date)]) async throws {
        let (lags, checkpoints) = try await Self.checkpointLags(client, store: store, acknowledged: acknowledged)
        guard !lags.isEmpty else { return }
        print(
            String(
                format:
                    "  acknowledgement to first covering checkpoint, 16 writers: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d appends, %d checkpoints published from the first on)",
                Stats.percentile(lags, 0.5), Stats.percentile(lags, 0.99), lags.last!, lags.count, checkpoints))
    }

    /// Each acknowledged append's lag (ms, sorted) to the publication of the first checkpoint
    /// covering it, once the log's head is checkpointed; and how many checkpoints were published
    /// from the first append's position on.
    static func checkpointLags(
        _ client: PostgresClient, store: EventStore, acknowledged: [(position: Int64, at: Date)], within limit: Duration = .seconds(60)
    ) async throws -> (lags: [Double], checkpoints: Int) {
        let tree = LogTree(client: client, logger: Logger(label: "bench"))
        let head = try await store.head().position
        _ = try await tree.checkpoint(atLeast: head, within: limit)
        let first = acknowledged.map(\.position).min() ?? head
        var signed: [(size: Int64, at: Double)] = []
        for try await (size, at) in try await client.query(
            """
            SELECT tree_size, extract(epoch FROM published_at)::float8 FROM ledger_published_checkpoints
            WHERE tree_size >= \(first) ORDER BY tree_size
            """
        ).decode((Int64, Double).self) { signed.append((size, at)) }
        var lags: [Double] = []
        for ack in acknowledged {
            // The first checkpoint at or past the append's position (binary search).
            var (low, high) = (0, signed.count - 1)
            while low < high {
                let mid = (low + high) / 2
                if signed[mid].size >= ack.position { high = mid } else { low = mid + 1 }
            }
            lags.append((signed[low].at - ack.at.timeIntervalSince1970) * 1000)
        }
        return (lags.sorted(), signed.count)
    }

    /// Events per second appended by `writers` concurrent tasks for `seconds`, and the CPU per event.
    /// `read`, when given, runs before each append with the writer's number: a command's read of
    /// what it decides on (`ledger-bench commands`' floor).
    static func appendRate(
        _ store: EventStore, writers: Int, batch: Int, tag: String, seconds: Double,
        read: (@Sendable (Int) async throws -> Void)? = nil
    ) async throws -> (Double, CPUTime.PerOperation, [(position: Int64, at: Date)]) {
        let data = #"{"rootHash":"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=","kind":"bench"}"#
        let meta = EventMetadata(actor: "bench", requestId: UUID().uuidString).json()
        let clock = ContinuousClock()
        let cpu = CPUTime.now()
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let (total, acks) = try await withThrowingTaskGroup(of: (Int, [(position: Int64, at: Date)]).self) { group in
            for w in 0..<writers {
                group.addTask {
                    var count = 0
                    var version: Int64 = 0
                    var acks: [(position: Int64, at: Date)] = []
                    let stream = "bench-\(tag)-\(w)"
                    while clock.now < deadline {
                        try await read?(w)
                        let events = (0..<batch).map { _ in NewEvent(type: "BenchEvent", data: data, metadata: meta) }
                        let result = try await store.append(.init(streamId: stream, expectedVersion: .exact(version), events: events))
                        acks.append((result.lastPosition, Date()))
                        version = result.version
                        count += batch
                    }
                    return (count, acks)
                }
            }
            return try await group.reduce((0, [])) { ($0.0 + $1.0, $0.1 + $1.1) }
        }
        let elapsed = clock.now - start
        return (
            Double(total) / elapsed.seconds,
            CPUTime.since(cpu, operations: total), acks
        )
    }
}
