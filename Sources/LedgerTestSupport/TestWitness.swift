import Foundation
import Hummingbird
import LedgerPostgres
import LedgerWitness
import Logging
import ServiceLifecycle
import Synchronization
import TransparencyLog

/// A witness (`ledger witness serve`'s server) in this process on a fixed port, stoppable and restartable on the same port and state.
public final class TestWitness: Sendable {
    public let cosigner: Cosigner
    public let directory: String
    public let port: Int
    public let log: NoteVerifier
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>, state: WitnessState)?>(nil)

    public init(_ name: String, log: NoteVerifier) throws {
        cosigner = try Cosigner(name: name)
        // On tmpfs where there is one: a witness syncs its state on every new checkpoint, and a
        // sync on a disk the test cluster fills with unsynced pages can take seconds.
        let scratch =
            FileManager.default.fileExists(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory
        directory = scratch.appendingPathComponent("witness-\(UUID())").path
        port = try EmbeddedPostgres.freePort()
        self.log = log
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    public var url: String { "http://127.0.0.1:\(port)" }
    public func policyLine(_ name: String) -> String { "witness \(name) \(cosigner.verifier.text) \(url)" }

    public func start() async throws {
        let state = try WitnessState(directory: directory, logs: [log], cosigner: cosigner)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = WitnessServer.application(state: state, host: "127.0.0.1", port: port, logger: Logger(label: "witness")) {
            listening.yield($0)
        }
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "witness")))
        running.withLock { $0 = (group, Task { try await group.run() }, state) }
        var iterator = ports.makeAsyncIterator()
        _ = await iterator.next()
    }

    /// Stops it (a graceful shutdown: its listening socket and connections closed), and gives
    /// its data folder up, as a process that exits does, so it can start again on it.
    public func stop() async {
        guard
            let (group, task, state) = running.withLock({ running in
                defer { running = nil }
                return running
            })
        else { return }
        await group.triggerGracefulShutdown()
        _ = await task.result
        state.release()
    }

    /// The size it last cosigned, from its state file (read beside it, running or not).
    public func size(_ origin: String) throws -> Int64? {
        try WitnessState.stored(directory: directory)[origin]?.size
    }

    /// Its state file's records, by origin.
    public func records() throws -> [String: WitnessState.Record] {
        try WitnessState.stored(directory: directory)
    }

    /// How many times the running witness has synced its state to disk (0 when stopped).
    public var syncs: Int { running.withLock { $0?.state.syncs } ?? 0 }
}
