import ServiceLifecycle
import Synchronization

/// Whether `/ready` says ready: until graceful shutdown begins (SIGTERM), then 503 at once, so
/// a load balancer stops sending new requests while the process finishes the ones it has.
/// Listed after the HTTP server in the service group, so it hears of the shutdown first; it
/// then holds the server's own shutdown back for `drain` (the balancer's time to notice), during
/// which every other endpoint still answers.
public final class Readiness: Service, Sendable {
    let drain: Duration
    private let stopping = Atomic<Bool>(false)

    public init(drain: Duration = .zero) { self.drain = drain }

    public var isStopping: Bool { stopping.load(ordering: .relaxed) }

    public func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // cancelled: the process is stopping anyway
        }
        stopping.store(true, ordering: .relaxed)
        try? await Task.sleep(for: drain)
    }
}
