import ArgumentParser
import Crypto
import Foundation
import Histogram
import LedgerApp
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import LedgerWire
import Logging
import PostgresNIO
import Synchronization

struct BenchExpiry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expiry",
        abstract:
            "Access windows falling due while writers append: the lag from each window's end to its AccessExpired, and the writers' throughput during the expiries against the second before.",
        discussion: """
            A ledger runs in this process (the services of `ledger serve`, the expiry service \
            among them). Setup: collaborations whose identities are invited and granted with \
            windows ending at random moments within one second, a few seconds ahead. Then writers \
            append notices to other collaborations through the command loop from two seconds \
            before that second to one second after it. Lag: each AccessExpired's commit time \
            less its dueAt. Throughput: the writers' acknowledged appends in the due second \
            against the second before it (the baseline, same run).
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Windows falling due.") var windows = 10_000
    @Option(help: "Identities per collaboration.") var perCollaboration = 100
    @Option(help: "Writers.") var writers = 16

    func run() async throws {
        let quiet = Logs.quiet()
        let (windows, perCollaboration, writers) = (windows, max(1, perCollaboration), writers)
        try await target.run(logger: quiet) { settings in
            try await LocalLedger.run(settings, logger: quiet, maxConnections: 40) { ledger in
                let store = EventStore(client: ledger.client, logger: quiet)
                let owners = try await BenchFeed.startCollaborations(store, count: (windows + perCollaboration - 1) / perCollaboration).map(
                    \.id)
                let written = try await BenchFeed.startCollaborations(store, count: 200).map(\.id)
                // The due second starts far enough ahead for the setup and the projection.
                let setupStart = Date()
                let start = setupStart.addingTimeInterval(8 + Double(windows) / 2_000)
                try await Self.grantWindows(store, owners, windows: windows, perCollaboration: perCollaboration, dueFrom: start)
                let setup = Date().timeIntervalSince(setupStart)
                guard Date() < start.addingTimeInterval(-2) else {
                    throw ValidationError(String(format: "the setup took %.1f s, past the windows' start; use fewer windows", setup))
                }
                print("ledger bench expiry: \(windows) windows due within one second (\(owners.count) collaborations), \(writers) writers")
                try await Self.waitUntil(start.addingTimeInterval(-2))
                let acks = try await Self.write(store, written, writers: writers, until: start.addingTimeInterval(1.5))
                let expired = try await Self.waitForExpiries(ledger.client, count: windows, logger: quiet)
                var lag = Histogram<UInt64>(highestTrackableValue: 600_000_000)
                for micros in expired { _ = lag.record(UInt64(max(0, micros))) }
                let before = acks.filter { $0 >= start.addingTimeInterval(-1) && $0 < start }.count
                let during = acks.filter { $0 >= start && $0 < start.addingTimeInterval(1) }.count
                print(
                    String(
                        format: "  dueAt to AccessExpired: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d events; target p99 <= 1000 ms)",
                        Double(lag.valueAtPercentile(50)) / 1000, Double(lag.valueAtPercentile(99)) / 1000, Double(lag.max) / 1000,
                        expired.count))
                print(
                    String(
                        format: "  writers: %d appends/s in the due second, %d in the second before   ratio %.2f",
                        during, before, Double(during) / Double(max(before, 1))))
            }
        }
    }

    /// Each collaboration's identities invited with windows ending within [dueFrom, dueFrom + 1 s),
    /// and each granted (an AccessGranted as the verifier appends it), in one append per
    /// collaboration.
    static func grantWindows(_ store: EventStore, _ ids: [String], windows: Int, perCollaboration: Int, dueFrom: Date) async throws {
        let collaborations = CollaborationStreams(store: store)
        var random = SeededRandom(seed: 7)
        var remaining = windows
        for (c, id) in ids.enumerated() {
            let count = min(perCollaboration, remaining)
            remaining -= count
            var events: [CollaborationEvent] = []
            for i in 0..<count {
                let hash = try RootHash(bytes: Array(SHA256.hash(data: Data("\(id)-\(i)".utf8))))
                let end = dueFrom.addingTimeInterval(Double(random.next() % 1_000_000) / 1_000_000)
                events.append(.identityAdded(.init(rootHash: hash, window: try AccessWindow(notBefore: nil, notAfter: end))))
                events.append(
                    .accessGranted(
                        .init(
                            rootHash: hash, account: "member-\(c)-\(i)", proofRequestId: UUID().uuidString.lowercased(),
                            challengeId: UUID().uuidString.lowercased(),
                            proof: IdentityProof(publicKey: [4], publicKeyIndex: 0, inclusionHashes: []),
                            challenge: [1], signature: [2], window: try AccessWindow(notBefore: nil, notAfter: end))))
            }
            _ = try await collaborations.decideAndAppend(id) { _ in .init(events: events, metadata: EventMetadata(actor: "owner-\(c)")) }
        }
    }

    static func waitUntil(_ moment: Date) async throws {
        let wait = moment.timeIntervalSinceNow
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int64(wait * 1000))) }
    }

    /// `writers` tasks appending a notice each to random collaborations until `end`; the wall
    /// time of every acknowledgement.
    static func write(_ store: EventStore, _ ids: [String], writers: Int, until end: Date) async throws -> [Date] {
        let collaborations = CollaborationStreams(store: store)
        return try await withThrowingTaskGroup(of: [Date].self) { group in
            for w in 0..<writers {
                group.addTask {
                    var random = SeededRandom(seed: UInt64(300 + w))
                    var acks: [Date] = []
                    while Date() < end {
                        let index = Int(random.next() % UInt64(ids.count))
                        do {
                            _ = try await collaborations.decideAndAppend(ids[index]) { _ in
                                .init(
                                    events: [
                                        .highlightPosted(
                                            .init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "owner-\(index)"))
                                    ],
                                    metadata: EventMetadata(actor: "owner-\(index)"))
                            }
                            acks.append(Date())
                        } catch let error as StoreError where error.isVersionConflict {
                            continue
                        }
                    }
                    return acks
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// Waits (at most a minute) for `count` AccessExpired events; each one's lag in microseconds.
    static func waitForExpiries(_ client: PostgresClient, count: Int, logger: Logger) async throws -> [Int64] {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let lags = try await client.queryUnlessClosed(
                """
                SELECT ((extract(epoch FROM recorded_at) - extract(epoch FROM (data->>'dueAt')::timestamptz)) * 1000000)::int8
                FROM ledger_events WHERE event_type = 'AccessExpired'
                """, logger: logger
            ) { rows in
                var lags: [Int64] = []
                for try await lag in rows.decode(Int64.self) { lags.append(lag) }
                return lags
            }
            if lags.count >= count || ContinuousClock.now > deadline { return lags }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
