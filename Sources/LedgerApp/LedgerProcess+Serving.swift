import LedgerPostgres
import Logging
import ServiceLifecycle
import Synchronization

extension LedgerProcess {
    public struct NotListening: Error, CustomStringConvertible {
        public var description: String { "the ledger's services stopped before the HTTP server was listening" }
    }

    /// Services that did not return within `serving`'s shutdown bound: named, so a service that
    /// ignores shutdown and cancellation is found rather than holding its caller for ever.
    public struct ServicesDidNotStop: Error, CustomStringConvertible {
        public var services: [String]
        public var description: String { "services still running after shutdown's bound: \(services.joined(separator: ", "))" }
    }

    /// Runs the services built by `services` (given the callback their HTTP server calls with
    /// its port once listening), calls `body` with that port, then shuts them down gracefully.
    /// `serving(logger:_:)` runs a process's services through it; tests of shutdown run their own.
    ///
    /// Bounded: a client that keeps a stream open (a feed) cannot hold the shutdown (graceful
    /// shutdown gives way to cancellation after `gracefulShutdown`), and services still running
    /// `shutdownBound` after it began are left behind and named in `ServicesDidNotStop`, so the
    /// caller goes on and learns which one it was.
    public static func serving<T: Sendable>(
        logger: Logger, gracefulShutdown: Duration = .seconds(10), shutdownBound: Duration = .seconds(30),
        _ services: (@escaping @Sendable (Int) async -> Void) -> [any Service],
        _ body: @Sendable (Int) async throws -> T
    ) async throws -> T {
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let running = RunningServices()
        let built = services { listening.yield($0) }
        var configuration = ServiceGroupConfiguration(
            services: built.enumerated().map { .init(service: RunningServices.Tracked(inner: $1, index: $0, running: running)) },
            logger: logger)
        configuration.maximumGracefulShutdownDuration = gracefulShutdown
        let group = ServiceGroup(configuration: configuration)
        // Unstructured, so that a service that never returns can be left behind.
        let run = Task {
            defer { listening.finish() }
            try await group.run()
        }
        return try await withTaskCancellationHandler {
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                do {
                    try await withDeadline(shutdownBound, "the services' stop before listening") { try await run.value }
                } catch is DeadlineExceeded {
                    throw ServicesDidNotStop(services: running.names)
                }
                throw NotListening()
            }
            let result: Result<T, any Error>
            do { result = .success(try await body(port)) } catch { result = .failure(error) }
            await group.triggerGracefulShutdown()
            do {
                try await withDeadline(shutdownBound, "the services' shutdown") { try await run.value }
            } catch {
                var stopped = error
                if error is DeadlineExceeded {
                    let names = running.names
                    logger.critical("services did not stop; left behind", metadata: ["services": "\(names)"])
                    stopped = ServicesDidNotStop(services: names)
                }
                if case .failure(let failed) = result { throw failed }  // what the caller did comes first
                throw stopped
            }
            return try result.get()
        } onCancel: {
            run.cancel()
        }
    }
}

/// The services of a group that have not returned from `run()` yet, by type name.
final class RunningServices: Sendable {
    private let running = Mutex<[Int: String]>([:])

    var names: [String] { running.withLock { $0.sorted { $0.key < $1.key }.map(\.value) } }

    /// A service as the group runs it, marked running until its `run()` returns (graceful
    /// shutdown still reaches it: it runs in the same task).
    struct Tracked: Service, CustomStringConvertible {
        let inner: any Service
        let index: Int
        let running: RunningServices

        /// The group's logs name the service, not the wrapper.
        var description: String { String(describing: inner) }

        func run() async throws {
            running.running.withLock { $0[index] = String(describing: type(of: inner)) }
            defer { _ = running.running.withLock { $0.removeValue(forKey: index) } }
            try await inner.run()
        }
    }
}
