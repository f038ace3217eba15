import ArgumentParser
import LedgerBench

@main
struct Ledger: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Participant Ledger: the append-only, tamper-evident backend of custom collaborations shared through Messages.",
        subcommands: [Serve.self, API.self, Project.self, Verifier.self, Deliver.self, CheckpointerRole.self, Migrate.self, Backup.self, Restore.self, Projections.self, Audit.self, Log.self, Token.self, Privacy.self, Witness.self, SettingsCommand.self, Demo.self, Bench.self]
    )
}
