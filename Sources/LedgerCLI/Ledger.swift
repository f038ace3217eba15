import ArgumentParser
import LedgerPostgres
import PostgresNIO

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
            Shards.self, IndexCommand.self,
        ]
    )

    /// As ArgumentParser's, but a database error that ends a command says what failed (the
    /// SQLSTATE, the server's message, what to do) and in which command, not PostgresNIO's
    /// generic description.
    static func main() async {
        var name = "ledger"
        do {
            var command = try await asyncParseAsRoot(nil)
            let names = path(to: type(of: command))
            if !names.isEmpty { name = names.joined(separator: " ") }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: explained(error, in: name))
        }
    }

    /// A database error explained, with the command that ran as what was being done (unless it says more).
    static func explained(_ error: any Error, in command: String) -> any Error {
        if let error = error as? PSQLError { return DatabaseFailure(error, doing: "`\(command)`") }
        guard var failure = error as? DatabaseFailure else { return error }
        failure.doing = failure.doing ?? "`\(command)`"
        return failure
    }

    /// The names from `ledger` down to `command`: ["ledger", "shards", "init"] (empty if it is not below `root`).
    static func path(to command: any ParsableCommand.Type, from root: any ParsableCommand.Type = Ledger.self) -> [String] {
        if ObjectIdentifier(command) == ObjectIdentifier(root) { return [root._commandName] }
        for sub in root.configuration.subcommands {
            let below = path(to: command, from: sub)
            if !below.isEmpty { return [root._commandName] + below }
        }
        return []
    }
}
