import ArgumentParser
import Foundation
import LedgerApp
import LedgerBackup
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import Logging
import PostgresNIO
import TransparencyLog

/// The scale curve: one log grown to each size in turn, and at each size the figures that must
/// stay flat as a log grows, each beside the same size's pgbench where it is a rate.
struct BenchScale: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract:
            "One log grown to each size in turn (1M, 5M, 20M events): appends, starts, proofs, asOf pages, tiles, ack-to-checkpoint, the index's lag and lookups, the membership rebuild, backup and restore, and disk, at each size.",
        discussion: """
            A ledger runs in this process (the services of `ledger serve`, checkpointer included) on a \
            throwaway embedded PostgreSQL or --database-url. The log grows by realistic collaborations \
            of about 30 events (starts, identities added and removed, grants, revocations, highlights) \
            appended by 8 writers, and at the first size one large collaboration beside them. Once the views and the tree \
            and the index have caught up and the database is vacuumed (untimed), each size measures: pgbench's \
            single-row inserts at 16 clients (the rates' baseline); single appends at 16 writers and \
            each one's acknowledgement to its first covering checkpoint and index revision; lookups of \
            collaborations drawn from the whole log (16 clients); starts and proofs over HTTP \
            (16 clients, load from a separate process); an asOf first page on the large collaboration; \
            full tiles and entry bundles; the membership rebuild beside the raw read of the log; a \
            base backup (pg_basebackup) and its restore (laid out, started, the log's head read back); \
            disk per million events. --csv writes the table for scripts/plot-scale.
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "The sizes the log is grown to, in turn: events, comma-separated, ascending.")
    var events = "1000000,5000000,20000000"
    @Option(help: "Events in the one large collaboration (appended while growing to the first size), where asOf pages are timed.")
    var largeCollaboration = 100_000
    @Option(help: "Seconds per rate measurement.") var seconds = 5.0
    @Option(help: "Write the table to this CSV file as well.") var csv: String?

    func validate() throws { _ = try sizes() }

    /// The sizes asked for: ascending, each above the large collaboration.
    func sizes() throws -> [Int] {
        let sizes = events.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !sizes.isEmpty, sizes.allSatisfy({ $0 != nil }) else { throw ValidationError("--events: comma-separated event counts") }
        let counts = sizes.compactMap { $0 }
        // Each size at least 10% past the one before: the probes' own appends (a few seconds of
        // them) must not reach the next size.
        guard zip(counts, counts.dropFirst()).allSatisfy({ $1 >= $0 + $0 / 10 + 100_000 }), counts[0] > largeCollaboration,
            largeCollaboration > 0, counts.last! <= 1_000_000_000
        else {
            throw ValidationError(
                "--events: ascending sizes, each at least 10% and 100,000 past the one before, the first above --large-collaboration (\(largeCollaboration), at least 1), at most 1e9"
            )
        }
        return counts
    }

    func run() async throws {
        let quiet = Logs.quiet()
        let (sizes, large, seconds) = (try sizes(), largeCollaboration, seconds)
        Self.say("ledger bench scale: a log grown to \(sizes.map(String.init).joined(separator: ", ")) events; \(seconds) s a rate")
        var rows: [ScaleRow] = []
        var owner: (username: String, password: String?, database: String) = ("", nil, "")
        // A backup whose restore waits is not left on the disk by a failure (each is deleted
        // once restored, too).
        let deferred = ScaleBackup.Deferred()
        defer { deferred.removeAll() }
        try await target.run(logger: quiet) { settings in
            owner = (settings.username, settings.password, settings.database)
            let signer = try NoteSigner(name: "bench.local/ledger")
            rows = try await LocalLedger.run(settings, logger: quiet, maxConnections: 60, signer: signer) { ledger in
                try await Pgbench.createTable(ledger.client)
                let probes = ScaleProbes(ledger: ledger, settings: settings, seconds: seconds, deferred: deferred, logger: quiet)
                var rows: [ScaleRow] = []
                for (step, size) in sizes.enumerated() {
                    let growth = try await Self.grow(
                        ledger.client, to: size, large: step == 0 ? large : 0, seed: UInt64(1000 + 16 * step), logger: quiet)
                    var row = try await probes.measure(tilesFrom: rows.last?.tilesThrough ?? 0)
                    row.walPerMillion = growth.walPerMillion
                    row.growthRate = growth.rate
                    Self.say(row.line)
                    rows.append(row)
                }
                return rows
            }
        }
        for index in rows.indices {
            guard let taken = rows[index].pendingRestore else { continue }
            Self.say("  restoring the backup of \(taken.head) events now that the bench's cluster is gone (no room beside it)")
            do {
                let restore = try await ScaleBackup.restore(
                    taken, username: owner.username, password: owner.password, database: owner.database, logger: quiet)
                rows[index].restorePerMillion = restore.seconds / (Double(taken.head) / 1_000_000)
            } catch {
                // The table is still printed; this figure is missing from it.
                Self.say("  that restore failed: \(error)")
                rows[index].restorePerMillion = .nan
            }
        }
        ScaleRow.printTable(rows)
        if let csv { try ScaleRow.csv(rows).write(toFile: csv, atomically: true, encoding: .utf8) }
    }

    /// What one growth step cost: events appended a second, and WAL written per million events.
    struct Growth {
        var rate: Double
        var walPerMillion: Double
    }

    /// Grows the log to `size` events, then waits (an hour at most) for the views and a signed
    /// checkpoint to cover it and vacuums the database, as autovacuum would leave a log at rest;
    /// only the appends are timed.
    static func grow(_ client: PostgresClient, to size: Int, large: Int, seed: UInt64, logger: Logger) async throws -> Growth {
        let store = EventStore(client: client, logger: logger)
        let before = try await store.head().position
        let (lsn, images) = try await walWritten(client)
        let started = ContinuousClock.now
        try await BenchReplay.generate(store, events: size - Int(before), large: large, seed: seed)
        let appended = ContinuousClock.now - started
        let head = try await store.head().position
        let settled = ContinuousClock.now
        try await BenchCommands.caughtUp(client, logger: logger, within: .seconds(3600))
        _ = try await LogTree(client: client, logger: logger).checkpoint(atLeast: head, within: .seconds(3600))
        // The index too: its revisions recorded past the head (`ledger serve` records them).
        try await BenchIndexAppends.recorded(store, covering: head, within: .seconds(3600))
        let caughtUp = ContinuousClock.now - settled
        // The WAL of the growth with the views' and the tree's for it, before the vacuum's own.
        let (lsnAfter, imagesAfter) = try await walWritten(client)
        let (wal, imaged) = (lsnAfter - lsn, imagesAfter - images)
        let vacuumStarted = ContinuousClock.now
        try await client.query("VACUUM (ANALYZE)", logger: logger)
        let grown = Double(head - before)
        say(
            String(
                format:
                    "  grew to %lld events: %.0f events/s appended; views and checkpoint %.0f s after; WAL with them %.0f MB per million events, %.0f full-page images per million events; vacuum %.0f s (untimed)",
                head, grown / appended.seconds, caughtUp.seconds, Double(wal) / grown, Double(imaged) / grown * 1_000_000,
                (ContinuousClock.now - vacuumStarted).seconds))
        return Growth(rate: grown / appended.seconds, walPerMillion: Double(wal) / grown * 1_000_000)
    }

    /// A run lasts long: its progress goes out line by line, unbuffered even when stdout is a
    /// file (the table at the end is printed).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The server's WAL insert position in bytes, and the full-page images written to the WAL
    /// since the cluster's start (`pg_stat_wal`), read in one statement.
    static func walWritten(_ client: PostgresClient) async throws -> (bytes: Int64, images: Int64) {
        var written: (bytes: Int64, images: Int64) = (0, 0)
        for try await (bytes, images) in try await client.query(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8, wal_fpi FROM pg_stat_wal"
        ).decode((Int64, Int64).self) { written = (bytes, images) }
        return written
    }
}
