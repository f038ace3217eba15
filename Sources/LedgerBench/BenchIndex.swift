import ArgumentParser
import Foundation
import LedgerDomain
import LedgerIndex
import LedgerIndexStore
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import Logging
import PostgresNIO
import TransparencyLog

/// The verifiable index's cost (issue 67, item 6), the parts that need no recorded revision: the
/// index rebuilt from the log (`IndexFolder`, batches of leaves folded into the tree on
/// PostgreSQL) beside the raw read of the same events in the same run, and the index's disk per
/// million events.
struct BenchIndex: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract:
            "The index rebuilt from the log beside the raw read of the same events (ratio, target 0.2); the index's disk per million events.",
        discussion: """
            Generates a log of realistic collaborations (8 writers, about 30 events each, as `replay` \
            does), vacuums it (untimed), times the raw sequential read of every event (one query, every \
            column) and EventStore's reads in batches, then rebuilds the index from position 1 in \
            batches of --batch leaves, one transaction each. The disk the index's tables take \
            (pg_total_relation_size, indexes included) is read when the index covers half the log and \
            all of it; the difference, scaled to a million events, is the disk per million events.
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Events in the log.") var events = 200_000
    @Option(help: "Leaves folded per transaction.") var batch = 5_000
    @Option(help: "scripts/index-check, run over the log's leaves to check the recorded roots (empty: not run).")
    var indexCheck = "scripts/index-check"

    func validate() throws {
        guard events >= 20_000, batch > 0 else { throw ValidationError("--events at least 20,000, --batch at least 1") }
    }

    func run() async throws {
        let quiet = Logs.quiet()
        let (events, batch) = (events, batch)
        try await target.run(logger: quiet) { settings in
            try await settings.withClient(logger: quiet, maxConnections: 20) { client in
                let store = EventStore(client: client, logger: quiet)
                print("ledger bench index: generating \(events) events…")
                try await BenchReplay.generate(store, events: events, large: 0)
                let head = try await store.head().position
                try await client.query("VACUUM (ANALYZE) ledger_events", logger: quiet)
                let raw = try await BenchReplay.rawRead(client, logger: quiet)
                let batched = try await Self.batchedRead(store, head: head, batch: batch)
                print(
                    String(format: "  %lld events; raw sequential read %.0f events/s, readAll in batches %.0f events/s", head, raw, batched)
                )

                let folder = IndexFolder(client: client, logger: quiet, batchSize: batch)
                let reader = IndexReader(client: client, logger: quiet)
                let half = head / 2
                var elapsed = Duration.zero
                var disk: [(covered: Int64, bytes: Int64)] = []
                var batches = 0
                for stop in [half, head] {
                    var covered = try await reader.state().logSize
                    while covered < stop {
                        let started = ContinuousClock.now
                        let outcome = try await folder.fold()
                        elapsed += ContinuousClock.now - started
                        guard case .folded(_, let state) = outcome else { throw ValidationError("the fold answered \(outcome)") }
                        (covered, batches) = (state.logSize, batches + 1)
                    }
                    disk.append((covered, try await reader.diskBytes()))
                    print(String(format: "  index covers %lld events: %.1f MB on disk", covered, Double(disk.last!.bytes) / 1e6))
                    // Kept and recorded (untimed), as `ledger serve` records revisions.
                    _ = try await IndexRecorder(client: client, events: store, logger: quiet).record()
                }
                let rate = Double(head) / elapsed.seconds
                let (memory, floor) = try await Self.memoryRebuild(store, head: head, batch: batch)
                let perMillion = Double(disk[1].bytes - disk[0].bytes) / Double(disk[1].covered - disk[0].covered) * 1_000_000
                print("")
                print(String(format: "  raw sequential read                 %10.0f events/s", raw))
                print(String(format: "  EventStore.readAll, batches of %-5d %10.0f events/s", batch, batched))
                print(
                    String(
                        format: "  index rebuild, batches of %-5d     %10.0f events/s   ratio to raw %.2f (target 0.2), %d batches, %.1f s",
                        batch, rate, rate / raw, batches, elapsed.seconds))
                print(
                    String(
                        format:
                            "  the same rebuild in memory          %10.0f events/s   ratio to raw %.2f (LedgerIndex alone: the tree's own cost)",
                        memory, memory / raw))
                print(
                    String(
                        format:
                            "  each leaf's keys and hash alone      %10.0f events/s   ratio to raw %.2f (the floor of any rebuild: no tree, no writes)",
                        floor, floor / raw))
                print(
                    String(
                        format: "  index disk per million events       %10.0f MB        (%.1f MB at %lld, %.1f MB at %lld events)",
                        perMillion / 1e6, Double(disk[0].bytes) / 1e6, disk[0].covered, Double(disk[1].bytes) / 1e6, disk[1].covered))
                if !indexCheck.isEmpty { try await Self.pythonCheck(client, script: indexCheck, logger: quiet) }
            }
        }
    }

    /// `scripts/index-check` (Python, from docs/TRUST.md alone) over every leaf of the log as
    /// `ledger_leaf` writes it: it checks each recorded revision's root; prints what it said.
    static func pythonCheck(_ client: PostgresClient, script: String, logger: Logger) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("index-check-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        let rows = try await client.query(
            """
            SELECT ledger_leaf(position, stream_id, version, event_id, event_type, data::text, metadata::text, recorded_at)
            FROM ledger_events ORDER BY position
            """, logger: logger)
        for try await leaf in rows.decode(Data.self) { try handle.write(contentsOf: Data((leaf.base64EncodedString() + "\n").utf8)) }
        try handle.close()
        let started = ContinuousClock.now
        let run = try await ProcessRunner.run("/usr/bin/env", ["python3", script, file.path])
        print(
            String(format: "  scripts/index-check over the log's leaves (%.0f s): ", (ContinuousClock.now - started).seconds)
                + run.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Events per second of the same rebuild into a `MemoryNodeStore` (LedgerIndex alone, no
    /// database): the leaves read first (untimed), then folded in batches of `batch`; and of the
    /// part every rebuild does whatever its tree and store, each leaf's keys (`IndexMap`, which
    /// reads the leaf's JSON) and its hash.
    static func memoryRebuild(_ store: EventStore, head: Int64, batch: Int) async throws -> (rebuild: Double, floor: Double) {
        var leaves: [[UInt8]] = []
        while Int64(leaves.count) < head {
            let events = try await store.readAll(after: Int64(leaves.count), limit: batch)
            guard !events.isEmpty else { break }
            leaves += events.map(EventLeaf.bytes)
        }
        let index = LogIndex(store: MemoryNodeStore())
        let started = ContinuousClock.now
        for first in stride(from: 0, to: leaves.count, by: batch) {
            _ = try await index.append(leaves[first..<min(first + batch, leaves.count)], from: Int64(first + 1))
        }
        let rebuild = Double(leaves.count) / (ContinuousClock.now - started).seconds
        let floorStarted = ContinuousClock.now
        var keys = 0
        for leaf in leaves {
            keys += IndexMap.keys(leaf: leaf).count
            keys += Int(MerkleTree.leafHash(leaf).first ?? 0) & 1  // kept, so the hash is computed
        }
        let floor = Double(leaves.count) / (ContinuousClock.now - floorStarted).seconds
        precondition(keys > 0, "the log's leaves yield keys")
        return (rebuild, floor)
    }

    /// Events per second of `EventStore.readAll` over the whole log in batches of `batch`.
    static func batchedRead(_ store: EventStore, head: Int64, batch: Int) async throws -> Double {
        let started = ContinuousClock.now
        var after: Int64 = 0
        while after < head {
            let events = try await store.readAll(after: after, limit: batch)
            guard let last = events.last else { break }
            after = last.position
        }
        return Double(head) / (ContinuousClock.now - started).seconds
    }
}
