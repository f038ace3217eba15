import ArgumentParser
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
import NIOCore
import NIOPosix
import Synchronization

#if os(Linux)
    /// glibc's malloc_trim (malloc.h, which the Glibc module does not export).
    @_silgen_name("malloc_trim") private func mallocTrim(_ pad: Int) -> Int32
#endif

struct BenchFeed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed",
        abstract:
            "The change feed: commit-to-client latency with many feed clients and 16 writers, memory per idle connection, and append throughput beside the same writers with no feed clients.",
        discussion: """
            A ledger runs in this process (the services of `ledger serve`). Each feed client is an \
            account owning one collaboration, connected to GET /v1/feed over its own TCP connection \
            (NIO, in this process). Writers append notices to random collaborations through the \
            command loop; each is seen by its owner's client. Latency: from a writer's acknowledged \
            append to the client reading the event's id. Memory: the process's resident set with \
            every client connected and idle, less before they connected, per connection (server and \
            client side both: an upper bound on the server's share).
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Feed clients.") var clients = 1000
    @Option(help: "Writers.") var writers = 16
    @Option(help: "Seconds each writing phase lasts.") var seconds = 10

    func run() async throws {
        let quiet = Logs.quiet()
        let (clients, writers, seconds) = (clients, writers, seconds)
        try await target.run(logger: quiet) { settings in
            try await LocalLedger.run(settings, logger: quiet, maxConnections: 40) { ledger in
                let store = EventStore(client: ledger.client, logger: quiet)
                let owned = try await Self.startCollaborations(store, count: clients)
                print(
                    "ledger bench feed: \(clients) collaborations, \(writers) writers, \(seconds) s a phase; the feed clients in a process of their own"
                )
                let alone = try await Self.write(store, owned, writers: writers, seconds: seconds)
                print(
                    String(
                        format: "  appends, no feed clients:   %8.0f events/s, server CPU %.0f µs each", alone.rate, alone.cpuPerEvent * 1e6
                    ))

                // Baseline: as many plain idle keep-alive connections (what the HTTP server itself
                // keeps for any connection), measured the same way and held open while the feed
                // clients connect, so neither reuses memory the other freed.
                let plain = try await FeedClientProcess.start(ledger, after: 0, clients: clients, health: true)
                let run = try await FeedClientProcess.start(ledger, after: try await store.head().position, clients: clients)
                _ = try await plain.finish(expecting: 0)
                print(
                    String(
                        format:
                            "  server memory per idle connection: feed %.1f KB, plain keep-alive HTTP %.1f KB (the feed's own: %.1f KB)",
                        run.perConnection(clients), plain.perConnection(clients), run.perConnection(clients) - plain.perConnection(clients))
                )
                let fed = try await Self.write(store, owned, writers: writers, seconds: seconds)
                let received = try await run.finish(expecting: fed.acks.count)
                print(
                    String(
                        format: "  appends, %d feed clients: %8.0f events/s, server CPU %.0f µs each   ratio to none: %.2f (CPU %.2f)",
                        clients, fed.rate, fed.cpuPerEvent * 1e6, fed.rate / alone.rate, fed.cpuPerEvent / alone.cpuPerEvent))
                var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000)
                var delivered = 0
                for (position, acked) in fed.acks {
                    guard let seen = received[position] else { continue }
                    delivered += 1
                    _ = histogram.record(seen > acked ? (seen - acked) / 1000 : 0)
                }
                // Every event is its owner's: a run where the clients saw none measured nothing.
                guard delivered > 0 else {
                    throw ValidationError("the feed clients received none of the \(fed.acks.count) events appended")
                }
                print(
                    String(
                        format: "  commit to client: p50 %.1f ms, p99 %.1f ms (%d of %d events delivered)",
                        Double(histogram.valueAtPercentile(50)) / 1000, Double(histogram.valueAtPercentile(99)) / 1000, delivered,
                        fed.acks.count))
            }
        }
    }

    /// One collaboration for each client's account `owner-i`, owned by the account's pseudonym as
    /// a start records it (the feed finds an account's collaborations by its pseudonym).
    static func startCollaborations(_ store: EventStore, count: Int) async throws -> [(id: String, owner: String)] {
        let subjects = Subjects(store: store)
        var owned: [(id: String, owner: String)] = []
        for i in 0..<count {
            let id = UUID().uuidString.lowercased()
            let owner = try await subjects.pseudonym(for: "owner-\(i)")
            let command = StartCollaboration(localIdentifier: "doc-\(i)", title: "Doc \(i)", initiatorHandle: "owner-\(i)@example.com")
            let started = command.started(
                collaborationId: id, owner: owner, universalLink: "https://ledger.example.com/collaborations/\(id)",
                commitments: command.commitments())
            guard case .started(let event) = started else { continue }
            _ = try await store.append(
                .init(
                    streamId: Streams.collaboration(id), expectedVersion: .noStream,
                    events: [started.newEvent(metadata: .init(actor: owner))],
                    state: CollaborationState(started: event).json))
            owned.append((id, owner))
        }
        return owned
    }

    /// What a writing phase did: events/s, this process's CPU per event, and when each append
    /// was acknowledged (CLOCK_MONOTONIC nanoseconds, by position).
    struct Phase {
        var rate: Double
        var cpuPerEvent: Double
        var acks: [Int64: UInt64]
    }

    /// `writers` tasks appending a notice each to random collaborations for `seconds`.
    static func write(_ store: EventStore, _ owned: [(id: String, owner: String)], writers: Int, seconds: Int) async throws -> Phase {
        let collaborations = CollaborationStreams(store: store)
        let acks = Acks()
        let deadline = ContinuousClock.now + .seconds(seconds)
        let (started, cpu) = (ContinuousClock.now, CPUTime.now())
        let appended = try await withThrowingTaskGroup(of: Int.self) { group in
            for w in 0..<writers {
                group.addTask {
                    var random = SeededRandom(seed: UInt64(100 + w))
                    var count = 0
                    while ContinuousClock.now < deadline {
                        let (id, owner) = owned[Int(random.next() % UInt64(owned.count))]
                        do {
                            let outcome = try await collaborations.decideAndAppend(id) { _ in
                                .init(
                                    events: [
                                        .highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: owner))
                                    ],
                                    metadata: EventMetadata(actor: owner))
                            }
                            acks.record(outcome.position)
                            count += 1
                        } catch let error as StoreError where error.isVersionConflict {
                            continue  // another writer kept winning this collaboration: pick another
                        }
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = (ContinuousClock.now - started).seconds
        return Phase(
            rate: Double(appended) / elapsed, cpuPerEvent: (CPUTime.now().process - cpu.process) / Double(max(appended, 1)), acks: acks.all)
    }

    /// This process's resident set, after giving freed heap back to the system (glibc keeps
    /// it otherwise, and the set would count memory no longer in use).
    static func residentBytes() -> Int {
        #if os(Linux)
            _ = mallocTrim(0)
        #endif
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    static func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ValidationError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// When each append was acknowledged, by position.
    final class Acks: Sendable {
        private let acks = Mutex<[Int64: UInt64]>([:])
        func record(_ position: Int64) {
            let now = Monotonic.nanos()
            acks.withLock { $0[position] = now }
        }
        var all: [Int64: UInt64] { acks.withLock { $0 } }
    }
}
