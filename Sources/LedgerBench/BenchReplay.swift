import ArgumentParser
import Foundation
import Histogram
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerProjections
import LedgerReadModel
import LedgerStore
import LedgerTelemetry
import LedgerWire
import Logging
import PostgresNIO
import Synchronization

struct BenchReplay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract:
            "Rebuild rate of each projection over a generated log, next to the raw sequential read of the same events table; members?asOf pages beside the whole unpaged answer."
    )

    @OptionGroup var target: BenchTarget
    @Option(help: "Events to generate (realistic collaborations of about 30 events).") var events = 1_000_000
    @Option(help: "Events in the one large collaboration asOf queries run against.") var largeCollaboration = 10_000
    @Option(help: "asOf queries to time.") var queries = 500

    func run() async throws {
        let quiet = Logs.quiet()
        let (events, large, queries) = (events, largeCollaboration, queries)
        try await target.run(logger: quiet) { settings in
            try await settings.withClient(logger: quiet, maxConnections: 20) { client in
                let store = EventStore(client: client, logger: quiet)
                print("ledger bench replay: generating \(events) events…")
                let generated = ContinuousClock.now
                try await Self.generate(store, events: events, large: large)
                let head = try await store.head().position
                print(String(format: "  generated %lld events in %.1f s", head, (ContinuousClock.now - generated).seconds))
                // A log at rest, as autovacuum leaves it: the first pass over freshly written rows
                // sets their hint bits and writes every page again (measured: the first rebuild
                // after generating took 2.3 s for collaborations, the same rebuild later 0.9 s).
                // The raw read below and every rebuild then read the same settled table.
                let vacuumed = ContinuousClock.now
                try await client.query("VACUUM (ANALYZE) ledger_events", logger: quiet)
                print(String(format: "  vacuumed ledger_events in %.1f s (not timed below)", (ContinuousClock.now - vacuumed).seconds))

                let raw = try await Self.rawRead(client, logger: quiet)
                print(String(format: "  raw sequential read of ledger_events (PostgresNIO, all columns): %.0f events/s", raw))
                var rates: [(Projection, Double)] = []
                for projection in Projection.allCases {
                    let report = try await ProjectionRebuild(client: client, logger: quiet).run(projection)
                    let rate = Double(report.events) / report.elapsed.seconds
                    rates.append((projection, rate))
                    print(String(format: "  rebuild %-15@ %10.0f events/s (%.1f s)", projection.rawValue, rate, report.elapsed.seconds))
                }
                let all = 1 / rates.map { 1 / $0.1 }.reduce(0, +)
                let asOf = try await Self.asOfLatency(client, store: store, logger: quiet, queries: queries)
                print("")
                print(String(format: "  raw sequential read           %10.0f events/s", raw))
                for (projection, rate) in rates {
                    print(
                        String(format: "  rebuild %-15@       %10.0f events/s   ratio to raw %.2f", projection.rawValue, rate, rate / raw))
                }
                print(String(format: "  rebuild all three, in turn    %10.0f events/s   ratio to raw %.2f", all, all / raw))
                print(
                    String(
                        format: "  members?asOf on a %d-event collaboration (%d random times, %.0f members there on average):", large,
                        queries, asOf.members))
                for (name, (p50, p99)) in [
                    ("first page of 100", asOf.first), ("a middle page of 100", asOf.middle),
                    ("whole answer, unpaged (every identity)", asOf.unpaged),
                ] {
                    print(
                        "    " + name.padding(toLength: 44, withPad: " ", startingAt: 0)
                            + String(format: "p50 %7.2f ms   p99 %7.2f ms", p50, p99))
                }
            }
        }
    }

    /// Simulated collaborations appended by 8 writers (their simulators seeded `seed`, `seed + 1`,
    /// …), plus one large collaboration of `large` events (none for 0).
    static func generate(_ store: EventStore, events: Int, large: Int, seed: UInt64 = 1000) async throws {
        let writers = 8
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask {
                    var simulator = LogSimulator(seed: seed + UInt64(w))
                    var written = 0
                    while written < (events - large) / writers {
                        let collaboration = simulator.collaboration(events: 30)
                        _ = try await store.append(
                            .init(
                                streamId: Streams.collaboration(collaboration.id), expectedVersion: .noStream,
                                events: collaboration.events.map { $0.newEvent(metadata: EventMetadata(actor: "bench")) }))
                        written += collaboration.events.count
                    }
                }
            }
            if large > 0 {
                group.addTask {
                    var simulator = LogSimulator(seed: 42)
                    let collaboration = simulator.collaboration(events: large)
                    var version: Int64 = 0
                    for chunk in stride(from: 0, to: collaboration.events.count, by: 500) {
                        let slice = collaboration.events[chunk..<min(chunk + 500, collaboration.events.count)]
                        version = try await store.append(
                            .init(
                                streamId: "collaboration-" + collaboration.id, expectedVersion: .exact(version),
                                events: slice.map { $0.newEvent(metadata: EventMetadata(actor: "bench")) })
                        ).version
                    }
                    largeId.withLock { $0 = collaboration.id }
                }
            }
            try await group.waitForAll()
        }
    }

    static let largeId = Mutex<String>("")

    static func rawRead(_ client: PostgresClient, logger: Logger) async throws -> Double {
        let start = ContinuousClock.now
        var count = 0
        let rows = try await client.query(
            "SELECT position, stream_id, version, event_id, event_type, data::text, metadata::text, recorded_at, hash FROM ledger_events ORDER BY position",
            logger: logger)
        for try await _ in rows { count += 1 }
        return Double(count) / (ContinuousClock.now - start).seconds
    }

    /// Latencies (p50, p99 in ms) of `members?asOf` at random times of the large collaboration's
    /// history, through the service as the API calls it: the first page of 100, a page from
    /// the middle of the members there (its cursor made here, untimed), and, as the same run's
    /// baseline, the whole unpaged answer (the member fold over every identity there).
    static func asOfLatency(
        _ client: PostgresClient, store: EventStore, logger: Logger, queries: Int
    ) async throws -> (first: (Double, Double), middle: (Double, Double), unpaged: (Double, Double), members: Double) {
        let id = largeId.withLock { $0 }
        let service = try await ReadClient(primary: client, store: store, logger: logger).reads()
        let cursors = PageCursors(client: client, logger: logger)
        let bounds = try await client.query(
            """
            SELECT (extract(epoch FROM min(at)) * 1000000)::int8, (extract(epoch FROM max(at)) * 1000000)::int8
            FROM proj_access_history WHERE collaboration_id = \(id)
            """, logger: logger)
        var (low, high): (Int64, Int64) = (0, 0)
        for try await (a, b) in bounds.decode((Int64, Int64).self) { (low, high) = (a, b) }
        var histograms = (0..<3).map { _ in Histogram<UInt64>(highestTrackableValue: 60_000_000) }
        var random = SeededRandom(seed: 7)
        var members = 0
        func timed<T>(_ index: Int, _ work: () async throws -> T) async rethrows -> T {
            let started = ContinuousClock.now
            let result = try await work()
            _ = histograms[index].record(UInt64((ContinuousClock.now - started).seconds * 1_000_000))
            return result
        }
        for _ in 0..<queries {
            let micros = low + Int64(random.next() % UInt64(max(1, high - low)))
            let first = try await timed(0) {
                try await service.members(id, caller: .operatorAuditor, asOf: Date(timeIntervalSince1970: Double(micros) / 1_000_000))
            }
            let position = first.position
            let all = try await timed(2) {
                var hashes: [String] = []
                let rows = try await client.query(
                    "SELECT root_hash FROM ledger_member_fold(\(id), '', \(position)) WHERE state <> 'removed' ORDER BY root_hash",
                    logger: logger)
                for try await row in rows { hashes.append(try PostgresRandomAccessRow(row)[0].decode(String.self)) }
                return hashes
            }
            members += all.count
            guard all.count > 200 else { continue }
            let cursor = try await cursors.encode(.init(kind: .members, scope: id, position: position, after: all[all.count / 2]))
            _ = try await timed(1) { try await service.members(id, caller: .operatorAuditor, cursor: cursor) }
        }
        func ms(_ histogram: Histogram<UInt64>) -> (Double, Double) {
            (Double(histogram.valueAtPercentile(50)) / 1000, Double(histogram.valueAtPercentile(99)) / 1000)
        }
        return (ms(histograms[0]), ms(histograms[1]), ms(histograms[2]), Double(members) / Double(max(1, queries)))
    }
}
