import ArgumentParser
import Dispatch
import Foundation
import LedgerApp
import LedgerPostgres
import LedgerTokens
import NIOCore
import NIOPosix
import Synchronization

/// The feed clients of `ledger-bench feed`, in a process of their own, so that the ledger's
/// process measures only the server's memory and CPU. Talks to its parent through files in
/// `--dir`: `tokens` (one bearer token per client) in, `connected` once every client has its
/// stream, `stop` (the number of events to wait for) from the parent, `received` (each event's
/// position and when it first reached a client, in CLOCK_MONOTONIC nanoseconds) out.
struct BenchFeedClients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed-clients", abstract: "Feed clients for `ledger-bench feed` (run by it).", shouldDisplay: false)

    @Option var url: String
    @Option var after: Int64
    @Option var dir: String
    @Flag(
        help:
            "Plain keep-alive connections instead (one GET /health each, then idle): the baseline of what any idle HTTP connection costs the server."
    )
    var health = false

    func run() async throws {
        let directory = URL(fileURLWithPath: dir)
        let tokens = try String(contentsOf: directory.appendingPathComponent("tokens"), encoding: .utf8).split(separator: "\n")
        let received = Received()
        var channels: [any Channel] = []
        for token in tokens {
            channels.append(
                try await FeedClient.connect(URL(string: url)!, token: String(token), after: after, health: health, received: received))
        }
        try await BenchFeed.waitFor("every feed client connected") { received.connected.load(ordering: .relaxed) == tokens.count }
        FileManager.default.createFile(atPath: directory.appendingPathComponent("connected").path, contents: nil)
        let stop = directory.appendingPathComponent("stop")
        try await BenchFeed.waitFor("the writers to finish", timeout: .seconds(600)) { FileManager.default.fileExists(atPath: stop.path) }
        let expected = Int((try? String(contentsOf: stop, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        try? await BenchFeed.waitFor("the clients read every event", timeout: .seconds(30)) { received.count >= expected }
        let lines = received.all.map { "\($0.key) \($0.value)" }.joined(separator: "\n")
        try lines.write(to: directory.appendingPathComponent("received.tmp"), atomically: true, encoding: .utf8)
        try FileManager.default.moveItem(
            at: directory.appendingPathComponent("received.tmp"), to: directory.appendingPathComponent("received"))
        for channel in channels { try? await channel.close() }
    }

    /// When each event id first reached a client, and how many clients are connected.
    final class Received: Sendable {
        private let seen = Mutex<[Int64: UInt64]>([:])
        let connected = Atomic<Int>(0)
        func record(_ position: Int64) {
            let now = Monotonic.nanos()
            seen.withLock { if $0[position] == nil { $0[position] = now } }
        }
        var all: [Int64: UInt64] { seen.withLock { $0 } }
        var count: Int { seen.withLock { $0.count } }
    }
}

/// CLOCK_MONOTONIC: one clock for every process of the machine, so the writers' acks and the
/// clients' reads compare.
enum Monotonic {
    static func nanos() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds  // CLOCK_MONOTONIC on Linux
    }
}

/// A raw HTTP/1.1 feed connection: sends the request, then scans what arrives for `id:` lines.
final class FeedClient: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    let received: BenchFeedClients.Received
    var pending = ""
    var connected = false

    init(received: BenchFeedClients.Received) { self.received = received }

    static func connect(
        _ baseURL: URL, token: String, after: Int64, health: Bool, received: BenchFeedClients.Received
    ) async throws -> any Channel {
        let host = baseURL.host ?? "127.0.0.1"
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(FeedClient(received: received)) }
            }
            .connect(host: host, port: baseURL.port ?? 80).get()
        let request =
            health
            ? "GET /health HTTP/1.1\r\nHost: \(host)\r\n\r\n"
            : "GET /v1/feed?after=\(after) HTTP/1.1\r\nHost: \(host)\r\nAuthorization: Bearer \(token)\r\nAccept: text/event-stream\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: request))
        return channel
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        // Chunked transfer coding puts "\r\n" around each chunk's size; Swift sees "\r\n" as one
        // Character, not a "\n", so it is made one first.
        pending += (buffer.readString(length: buffer.readableBytes) ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        if !connected, pending.contains(": feed after") || pending.hasPrefix("HTTP/1.1 200") {
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

/// The parent's side of `BenchFeedClients`: starts the process, measures this (the server's)
/// process's resident set before and after every client connected, and collects what they read.
struct FeedClientProcess {
    let directory: URL
    let child: Task<ProcessRunner.Output, any Error>
    var memory: (before: Int, after: Int)

    static func start(_ ledger: LocalLedger.Running, after: Int64, clients: Int, health: Bool = false) async throws -> FeedClientProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-feed-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var tokens: [String] = []
        for i in 0..<clients { tokens.append(try await ledger.authority.issue(account: "owner-\(i)")) }
        try tokens.joined(separator: "\n").write(to: directory.appendingPathComponent("tokens"), atomically: true, encoding: .utf8)
        let before = BenchFeed.residentBytes()
        // This executable again (`ledger-bench`, whose subcommand this is).
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let arguments =
            ["feed-clients", "--url", ledger.baseURL.absoluteString, "--after", "\(after)", "--dir", directory.path]
            + (health ? ["--health"] : [])
        let exited = Exited()
        let child = Task {
            defer { exited.flag.store(true, ordering: .relaxed) }
            return try await ProcessRunner.run(me, arguments)
        }
        let connected = directory.appendingPathComponent("connected").path
        try await BenchFeed.waitFor("every feed client connected") {
            FileManager.default.fileExists(atPath: connected) || exited.flag.load(ordering: .relaxed)
        }
        guard !exited.flag.load(ordering: .relaxed) else {
            throw ValidationError("the feed clients' process stopped: \(try await child.value.output)")
        }
        return FeedClientProcess(directory: directory, child: child, memory: (before, BenchFeed.residentBytes()))
    }

    /// The server's resident set grown per connection, KB.
    func perConnection(_ clients: Int) -> Double { Double(memory.after - memory.before) / Double(clients) / 1024 }

    final class Exited: Sendable { let flag = Atomic<Bool>(false) }

    /// Tells the clients how many events to wait for; when each first reached one (monotonic ns).
    func finish(expecting count: Int) async throws -> [Int64: UInt64] {
        defer { try? FileManager.default.removeItem(at: directory) }
        try "\(count)".write(to: directory.appendingPathComponent("stop"), atomically: true, encoding: .utf8)
        let output = try await child.value
        guard output.status == 0, let text = try? String(contentsOf: directory.appendingPathComponent("received"), encoding: .utf8) else {
            throw ValidationError("the feed clients' process failed (\(output.status)): \(output.output)")
        }
        var received: [Int64: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let position = Int64(fields[0]), let nanos = UInt64(fields[1]) { received[position] = nanos }
        }
        return received
    }
}
