import ArgumentParser

/// The shipped binary: the roles and the operators' tools. The benchmarks are an executable of
/// their own, `ledger-bench`, so this one links none of them.
@main
struct Ledger: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Participant Ledger: the append-only, tamper-evident backend of custom collaborations shared through Messages.",
        subcommands: [
            Serve.self, API.self, Project.self, Verifier.self, Deliver.self, CheckpointerRole.self, Migrate.self, Backup.self, Restore.self,
            Projections.self, Audit.self, Log.self, Token.self, Feed.self, Privacy.self, Witness.self, SettingsCommand.self, Demo.self,
            Shards.self,
        ]
    )
}
