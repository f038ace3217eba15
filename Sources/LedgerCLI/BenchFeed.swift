import ArgumentParser
import Foundation
import Histogram
import LedgerAPI
import LedgerDeviceSimulator
import LedgerDomain
import LedgerStore
import LedgerWire
import Logging
import NIOCore
import NIOPosix
import Synchronization

struct BenchFeed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed",
        abstract: "The change feed: commit-to-client latency with many feed clients and 16 writers, memory per idle connection, and append throughput beside the same writers with no feed clients.",
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
                let store = PostgresEventStore(client: ledger.client, logger: quiet)
                let ids = try await Self.startCollaborations(store, count: clients)
                print("ledger bench feed: \(clients) collaborations, \(writers) writers, \(seconds) s a phase")
                let alone = try await Self.write(store, ids, writers: writers, seconds: seconds, acks: nil)
                print(String(format: "  appends, no feed clients:        %8.0f events/s", alone))

                let before = Self.residentBytes()
                let received = Received()
                let head = try await store.head().position
                var channels: [any Channel] = []
                for i in 0..<clients {
                    let token = try await ledger.authority.issue(account: "owner-\(i)")
                    channels.append(try await FeedClient.connect(ledger.baseURL, token: token, after: head, received: received))
                }
                try await Self.waitFor("every feed client connected") { received.connected.load(ordering: .relaxed) == clients }
                let idle = Self.residentBytes()
                print(String(format: "  memory per idle feed connection: %8.1f KB (resident set: %.1f → %.1f MB)",
                    Double(idle - before) / Double(clients) / 1024, Double(before) / 1_048_576, Double(idle) / 1_048_576))

                let acks = Acks()
                let withFeed = try await Self.write(store, ids, writers: writers, seconds: seconds, acks: acks)
                let sent = acks.all
                try? await Self.waitFor("the clients read every event", timeout: .seconds(30)) { received.count >= sent.count }
                var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000)
                var delivered = 0
                for (position, acked) in sent {
                    guard let seen = received.at(position) else { continue }
                    delivered += 1
                    _ = histogram.record(UInt64(max(0, (seen - acked).seconds) * 1_000_000))
                }
                print(String(format: "  appends, %d feed clients:      %8.0f events/s   ratio to none %.2f", clients, withFeed, withFeed / alone))
                print(String(format: "  commit to client: p50 %.1f ms, p99 %.1f ms (%d of %d events delivered)",
                    Double(histogram.valueAtPercentile(50)) / 1000, Double(histogram.valueAtPercentile(99)) / 1000, delivered, sent.count))
                for channel in channels { try? await channel.close() }
            }
        }
    }

    static func startCollaborations(_ store: PostgresEventStore, count: Int) async throws -> [String] {
        var ids: [String] = []
        for i in 0..<count {
            let id = UUID().uuidString.lowercased()
            let started = StartCollaboration(localIdentifier: "doc-\(i)", title: "Doc \(i)", initiatorHandle: "owner-\(i)@example.com")
                .started(collaborationId: id, owner: "owner-\(i)", universalLink: "https://ledger.example.com/collaborations/\(id)")
            guard case .started(let event) = started else { continue }
            _ = try await store.append(.init(
                streamId: Streams.collaboration(id), expectedVersion: .noStream, events: [started.newEvent(metadata: .init(actor: "owner-\(i)"))],
                state: CollaborationState(started: event).json))
            ids.append(id)
        }
        return ids
    }

    /// `writers` tasks appending a notice each to random collaborations for `seconds`; events/s.
    static func write(_ store: PostgresEventStore, _ ids: [String], writers: Int, seconds: Int, acks: Acks?) async throws -> Double {
        let collaborations = Collaborations(store: store)
        let deadline = ContinuousClock.now + .seconds(seconds)
        let started = ContinuousClock.now
        let appended = try await withThrowingTaskGroup(of: Int.self) { group in
            for w in 0..<writers {
                group.addTask {
                    var random = SeededRandom(seed: UInt64(100 + w))
                    var count = 0
                    while ContinuousClock.now < deadline {
                        let index = Int(random.next() % UInt64(ids.count))
                        do {
                            let outcome = try await collaborations.decideAndAppend(ids[index]) { _ in
                                .init(events: [.highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "owner-\(index)"))],
                                      metadata: EventMetadata(actor: "owner-\(index)"))
                            }
                            acks?.record(outcome.position)
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
        return Double(appended) / (ContinuousClock.now - started).seconds
    }

    static func residentBytes() -> Int {
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
        private let acks = Mutex<[Int64: ContinuousClock.Instant]>([:])
        func record(_ position: Int64) { acks.withLock { $0[position] = .now } }
        var all: [Int64: ContinuousClock.Instant] { acks.withLock { $0 } }
    }

    /// When each event id first reached a client, and how many clients are connected.
    final class Received: Sendable {
        private let seen = Mutex<[Int64: ContinuousClock.Instant]>([:])
        let connected = Atomic<Int>(0)
        func record(_ position: Int64) { seen.withLock { if $0[position] == nil { $0[position] = .now } } }
        func at(_ position: Int64) -> ContinuousClock.Instant? { seen.withLock { $0[position] } }
        var count: Int { seen.withLock { $0.count } }
    }
}

/// A raw HTTP/1.1 feed connection: sends the request, then scans what arrives for `id:` lines.
final class FeedClient: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    let received: BenchFeed.Received
    var pending = ""
    var connected = false

    init(received: BenchFeed.Received) { self.received = received }

    static func connect(_ baseURL: URL, token: String, after: Int64, received: BenchFeed.Received) async throws -> any Channel {
        let host = baseURL.host ?? "127.0.0.1"
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(FeedClient(received: received)) }
            }
            .connect(host: host, port: baseURL.port ?? 80).get()
        let request = "GET /v1/feed?after=\(after) HTTP/1.1\r\nHost: \(host)\r\nAuthorization: Bearer \(token)\r\nAccept: text/event-stream\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: request))
        return channel
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        // Chunked transfer coding puts "\r\n" around each chunk's size; Swift sees "\r\n" as one
        // Character, not a "\n", so it is made one first.
        pending += (buffer.readString(length: buffer.readableBytes) ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        if !connected, pending.contains(": feed after") {
            connected = true
            received.connected.add(1, ordering: .relaxed)
        }
        // Complete lines only; a partial one waits for the rest.
        guard let lastNewline = pending.lastIndex(of: "\n") else { return }
        for line in pending[..<lastNewline].split(separator: "\n") where line.hasPrefix("id: ") {
            if let position = Int64(line.dropFirst(4).trimmingCharacters(in: .whitespaces)) { received.record(position) }
        }
        pending = String(pending[pending.index(after: lastNewline)...])
    }
}
