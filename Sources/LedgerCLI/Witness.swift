import ArgumentParser
import Foundation
import Hummingbird
import LedgerTelemetry
import LedgerWitness
import Logging
import ServiceLifecycle
import TransparencyLog
import UnixSignals

/// A witness for others to run for our log (C2SP `tlog-witness` v1, `tlog-cosignature` v1).
struct Witness: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a witness that cosigns a log's checkpoints, never one that does not extend the last it cosigned.",
        subcommands: [Keygen.self, Serve.self])

    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a witness key: the signing key (for --key) on stdout, its verifier key (for the log's policy) on stderr.")
        @Option(help: "The witness's name, a schema-less URL (e.g. witness.example.com/w1).") var name: String

        func run() throws {
            let cosigner = try Cosigner(name: name)
            print(cosigner.text)
            FileHandle.standardError.write(Data("witness verifier key: \(cosigner.verifier.text)\n".utf8))
        }
    }

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve POST /add-checkpoint for the given logs, keeping each log's latest cosigned size and root in --data-dir.")
        @Option(help: "Listen address.") var host = "127.0.0.1"
        @Option(help: "Listen port.") var port: Int
        @Option(help: "The witness's signing key file (`ledger witness keygen`).") var key: String
        @Option(help: "A log's verifier key (name+id+key); repeat for several logs.") var log: [String]
        @Option(help: "Where the witness keeps its state (witness-state.json); one witness per folder (witness.lock).") var dataDir: String

        func run() async throws {
            guard !log.isEmpty else { throw ValidationError("--log VKEY is required: the logs this witness cosigns") }
            let cosigner = try Cosigner(String(contentsOfFile: key, encoding: .utf8))
            let logs = try log.map { try NoteVerifier($0) }
            let logger = Logs.bootstrap(try loadConfiguration())
            // Refuses (FolderInUse, a non-zero exit naming the folder) while another witness holds it.
            let state = try WitnessState(directory: dataDir, logs: logs, cosigner: cosigner)
            let app = WitnessServer.application(state: state, host: host, port: port, logger: logger)
            logger.info("witness serving", metadata: ["key": "\(cosigner.verifier.text)", "logs": "\(logs.map(\.name))"])
            let group = ServiceGroup(
                configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        }
    }
}
