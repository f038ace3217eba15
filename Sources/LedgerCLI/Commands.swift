import ArgumentParser
import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerDomain
import LedgerLog
import LedgerStore
import LedgerTokens
import Logging
import PostgresNIO
import TransparencyLog

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a bearer token for the configured secret.")

    @Option(help: "Account id (the token's sub).") var account: String
    @Option(help: "Role to include, e.g. auditor.") var role: [String] = []
    @Option(help: "Days the token stays valid.") var days: Double = 30
    @Option(name: .long, help: ArgumentHelp(Setting.dataDir.help("Data folder holding the development secret"))) var dataDir: String?

    func run() async throws {
        // The API would refuse the token (401 reserved_account): no account may pass for a pseudonym.
        guard !Caller.isReserved(account) else {
            throw ValidationError("--account must not begin with psn- or erased: (in any case): that is the namespace of pseudonyms")
        }
        var configuration = try loadConfiguration()
        if let dataDir { configuration.dataDir = dataDir }
        let (authority, _) = try await Tokens.authority(configuration, createIfMissing: false)
        guard authority.canIssue else {
            throw ValidationError(
                "tokens come from the identity provider (LEDGER_JWKS_URL or LEDGER_JWKS_FILE is set), not from `ledger token`")
        }
        print(try await authority.issue(account: account, roles: role, validFor: days * 86400))
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let (applied, files) = try await database.withClient { client, logger in
            let migrator = try Migrator(client: client, logger: logger)
            // Function files applied again: changed, or their functions changed outside them.
            let files = try await migrator.pendingFunctions()
            return (try await migrator.migrate(), files)
        }
        if !applied.isEmpty {
            print("applied: \(applied.joined(separator: ", ")), then every function file")
        } else if !files.isEmpty {
            print("function files applied again: \(files.joined(separator: ", "))")
        } else {
            print("schema is up to date")
        }
    }
}

struct Log: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect and verify the event log.", subcommands: [Verify.self, CheckpointCommand.self, Keygen.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Walk the hash chain and recompute the Merkle tree from the events; with --checkpoint and --key, check that today's log extends a saved checkpoint. Exits non-zero naming what is wrong."
        )

        @OptionGroup var database: DatabaseOptions
        @Option(help: "A signed checkpoint saved earlier (`ledger log checkpoint`, `GET /tlog/checkpoint`).") var checkpoint: String?
        @Option(help: ArgumentHelp(Setting.logKey.help("The log's verifier key (name+id+key), needed with --checkpoint"))) var key: String?
        @Option(help: "Verify over HTTP from the log's public tiles at this base URL (no database access; needs --checkpoint).")
        var url: String?
        @Option(help: "With --url: a witness policy (C2SP tlog-policy) whose quorum must have cosigned the published checkpoint.")
        var policy: String?
        @Flag(
            help:
                "With --url, a ledger on shards (--key the deployment's): also check every shard's log against each of its checkpoints the top log recorded, and its published checkpoint."
        )
        var shards = false

        func validate() throws {
            if shards && url == nil { throw ValidationError("--shards checks the shards' logs from tiles: give --url") }
        }

        func run() async throws {
            let saved = try savedCheckpoint()
            if let url { return try await verifyRemote(url, saved: saved) }
            let report = try await database.withClient { client, logger in
                let store = EventStore(client: client, logger: logger)
                return try await LogVerification(store: store, tree: LogTree(client: client, logger: logger)).run(saved: saved)
            }
            var failed = false
            if let failure = report.failure {
                print("log verify: FAILED at position \(failure.position): \(failure)")
                print("events verified before the break: \(report.checked)")
                failed = true
            }
            if let failure = report.checkpointFailure {
                print("log verify: FAILED: \(failure)")
                failed = true
            }
            if failed { throw ExitCode(2) }
            print("log verify: OK, \(report.checked) events, head position \(report.headPosition), root \(Base64.encode(report.root))")
            if let saved { print("the log extends the saved checkpoint of size \(saved.size) (same root at that size)") }
        }

        /// From tiles alone: the published checkpoint (signature, quorum), its root from the tiles,
        /// and its consistency with the saved checkpoint. Exit 2 naming what does not hold.
        func verifyRemote(_ url: String, saved: TransparencyLog.Checkpoint?) async throws {
            guard let saved, let keyText = try key ?? loadConfiguration().logKey, let base = URL(string: url) else {
                throw ValidationError("--url needs --checkpoint FILE and --key VKEY (or LEDGER_LOG_KEY), and a URL")
            }
            let policy = try self.policy.map { try WitnessPolicy(String(contentsOfFile: $0, encoding: .utf8)) }
            let client = LedgerClient(baseURL: base, token: "")
            do {
                let published = try await client.verifyPublishedTree(extends: saved, key: NoteVerifier(keyText), policy: policy)
                // Every level checked before any OK is printed.
                let checks = shards ? try await client.verifyShardLogs(top: published.checkpoint, key: NoteVerifier(keyText)) : []
                if shards && checks.isEmpty { throw LogAuditFailure("the top log records no shard's checkpoint") }
                print(
                    "log verify: OK, the published tree of size \(published.checkpoint.size) (root \(Base64.encode(published.checkpoint.rootHash))) "
                        + "extends the saved checkpoint of size \(saved.size), from tiles alone"
                        + (policy == nil ? "" : "; cosigned by \(published.cosigners.joined(separator: ", "))"))
                for check in checks {
                    print(
                        "shard \(check.shard): OK, \(check.recorded) checkpoints recorded in the top log, each extending the one before; "
                            + "its tiles give the latest (size \(check.recordedSize)), and its published tree of size \(check.publishedSize) extends it"
                    )
                }
            } catch {
                print("log verify: FAILED: \(error)")
                throw ExitCode(2)
            }
        }

        /// The saved checkpoint, its signature checked with the key; exit 2 if it does not check.
        func savedCheckpoint() throws -> TransparencyLog.Checkpoint? {
            guard let path = checkpoint else { return nil }
            guard let keyText = try key ?? loadConfiguration().logKey else {
                throw ValidationError("--checkpoint needs --key (or LEDGER_LOG_KEY): the verifier key the checkpoint was signed with")
            }
            let note = try String(contentsOfFile: path, encoding: .utf8)
            do {
                return try TransparencyLog.Checkpoint.open(note, verifier: NoteVerifier(keyText))
            } catch {
                print("log verify: FAILED: the saved checkpoint does not check with the key: \(error)")
                throw ExitCode(2)
            }
        }
    }

    struct CheckpointCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "checkpoint",
            abstract: "Print the latest signed checkpoint; save it where the database's owners cannot reach it.")

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let latest = try await database.withClient { client, logger in
                try await LogTree(client: client, logger: logger).latestCheckpoint()
            }
            guard let latest else {
                throw ValidationError(
                    "no checkpoint has been signed yet: is a checkpointer running (`ledger serve` or `ledger checkpointer`)?")
            }
            print(latest.note, terminator: "")
        }
    }

    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a checkpoint signing key: the key (for LEDGER_SIGNING_KEY_FILE) on stdout, its verifier key on stderr.")

        @Option(help: "The log's origin, which names the key (e.g. ledger.example.com/ledger).") var origin: String

        func run() throws {
            let signer = try NoteSigner(name: origin)
            print(signer.text)
            FileHandle.standardError.write(Data("verifier key: \(signer.verifier.text)\n".utf8))
        }
    }
}

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Print every setting: flag, environment variable, default, meaning (docs/OPERATIONS.md's table)."
    )

    func run() {
        print(LedgerSettings.markdownTable, terminator: "")
    }
}
