import Foundation
import Hummingbird
import LedgerPostgres
import LedgerWitness
import Logging
import ServiceLifecycle
import TransparencyLog

/// Witnesses for a benchmark: `count` `ledger witness` servers in this process on loopback, each
/// with its state in a temporary folder, and the policy that needs all of them.
enum BenchWitnesses {
    /// The policy, and the witnesses' service groups (to shut down gracefully at the end).
    static func start(
        _ count: Int, log: NoteVerifier, in group: inout ThrowingTaskGroup<Void, any Error>, logger: Logger
    ) async throws -> (WitnessPolicy?, [ServiceGroup]) {
        guard count > 0 else { return (nil, []) }
        var services: [ServiceGroup] = []
        var lines = ["log \(log.text)"]
        for n in 1...count {
            let cosigner = try Cosigner(name: "w\(n).bench.local")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-witness-\(UUID())").path
            let state = try WitnessState(directory: directory, logs: [log], cosigner: cosigner)
            let port = try EmbeddedPostgres.freePort()
            let app = WitnessServer.application(state: state, host: "127.0.0.1", port: port, logger: logger)
            let service = ServiceGroup(configuration: .init(services: [app], logger: logger))
            services.append(service)
            group.addTask {
                defer { try? FileManager.default.removeItem(atPath: directory) }
                try await service.run()
            }
            lines.append("witness W\(n) \(cosigner.verifier.text) http://127.0.0.1:\(port)")
        }
        lines.append("group all all " + (1...count).map { "W\($0)" }.joined(separator: " "))
        lines.append("quorum all")
        return (try WitnessPolicy(lines.joined(separator: "\n")), services)
    }
}
