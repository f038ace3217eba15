import ArgumentParser
import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerIndex
import TransparencyLog

/// `ledger index verify`: the verifiable index rebuilt from the public tiles, every recorded root
/// compared (docs/TRUST.md, "The verifiable index").
struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index", abstract: "The verifiable index, checked from the log's tiles alone.", subcommands: [Verify.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Rebuild the index from the published tree's leaves (its entry bundles) and compare every revision the log records; exit 2 naming the first that differs.",
            discussion: """
                The leaves are checked against the published checkpoint's root first. Entry bundles need an \\
                auditor's token (--token-file) unless the ledger serves them publicly (LEDGER_PUBLIC_ENTRIES=yes).
                """)
        @Option(help: "The ledger's base URL, e.g. http://127.0.0.1:8080.") var url: String
        @Option(help: ArgumentHelp(Setting.logKey.help("The log's verifier key (name+id+key)"))) var key: String?
        @Option(help: "A witness policy (C2SP tlog-policy) whose quorum must have cosigned the published checkpoint.") var policy: String?
        @Option(help: "A file holding an auditor's bearer token (for the entry bundles).") var tokenFile: String?

        func run() async throws {
            guard let base = URL(string: url), base.scheme == "http" || base.scheme == "https", base.host != nil else {
                throw ValidationError("--url must be an http or https URL, e.g. http://127.0.0.1:8080")
            }
            guard let keyText = try key ?? loadConfiguration().logKey else {
                throw ValidationError("--key (or LEDGER_LOG_KEY) is required: the verifier key the checkpoint must be signed with")
            }
            let token = try tokenFile.map {
                try String(contentsOfFile: $0, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let witnesses = try policy.map { try WitnessPolicy(String(contentsOfFile: $0, encoding: .utf8)) }
            do {
                let verified = try await LedgerClient(baseURL: base, token: token ?? "")
                    .verifyIndex(key: NoteVerifier(keyText), policy: witnesses, publicEntries: token == nil)
                print(
                    "index verify: OK, \(verified.revisions.count) recorded index revision(s) equal the index rebuilt from the "
                        + "\(verified.checkpoint.checkpoint.size) leaves of the published tree"
                        + (verified.revisions.last.map { ", the last over \($0.logSize) events" } ?? "")
                        + "; the leaves' times rise from position \(verified.timesRiseFrom)")
            } catch {
                print("index verify: FAILED: \(error)")
                throw ExitCode(2)
            }
        }
    }
}
