import Foundation
import Hummingbird
import LedgerApp
import LedgerConfiguration
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@testable import LedgerAPI

@Suite("Server shutdown")
struct ShutdownTests {
    @Test("a handler that ignores cancellation does not hold the server's shutdown: it is abandoned")
    func stuckHandlerAbandoned() async throws {
        let hang = Hang()
        defer { hang.release() }
        let router = Router()
        router.get("stuck") { _, _ -> String in
            await hang.forever()
            return "never"
        }
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            responder: AbandoningResponder(inner: router.buildResponder()),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in listening.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "test"))
        var configuration = ServiceGroupConfiguration(services: [.init(service: app)], logger: Logger(label: "test"))
        configuration.maximumGracefulShutdownDuration = .milliseconds(300)
        configuration.maximumCancellationDuration = nil  // no crash: the test's deadline decides
        let group = ServiceGroup(configuration: configuration)
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        // A raw request on a NIO channel, never read: URLSession on Linux can deadlock the
        // test process when a task waiting on it is cancelled.
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(ByteBuffer(string: "GET /stuck HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        try await waitUntil("the handler is stuck") { hang.entered.withLock { $0 } }

        await group.triggerGracefulShutdown()
        // Graceful shutdown waits 0.3 s for the handler, then cancels the server: the stuck
        // handler is abandoned and the server stops.
        _ = try await withDeadline(.seconds(10), "the server's shutdown") { await running.result }
        #expect(hang.parked.withLock { $0.count } == 1, "the handler is still parked: abandoned, not awaited")
        try? await channel.close()
    }

    /// Calls back with a port, then waits for shutdown: the HTTP server's part in `serving`.
    struct Announcer: Service {
        let onRunning: @Sendable (Int) async -> Void
        func run() async throws {
            await onRunning(1)
            try? await gracefulShutdown()
        }
    }

    /// A service that ignores shutdown and cancellation alike.
    struct Stubborn: Service {
        let hang: Hang
        func run() async throws { await hang.forever() }
    }

    @Test("a service ignoring shutdown and cancellation does not hold serving's caller: left behind, named")
    func stuckServiceNamed() async throws {
        let hang = Hang()
        defer { hang.release() }
        let started = ContinuousClock.now
        let error = await #expect(throws: LedgerProcess.ServicesDidNotStop.self) {
            try await withDeadline(.seconds(60), "serving with a stuck service") {
                try await LedgerProcess.serving(
                    logger: Logger(label: "test"), gracefulShutdown: .milliseconds(200), shutdownBound: .seconds(2)
                ) {
                    [Announcer(onRunning: $0), Stubborn(hang: hang)]
                } _: { port in
                    #expect(port == 1)
                }
            }
        }
        #expect(error?.services == ["Stubborn"], "the stuck one, and only it, named")
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(hang.parked.withLock { $0.count } == 1, "still parked: left behind, not awaited")
    }
}
