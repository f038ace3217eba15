import ArgumentParser
import Foundation
import LedgerClient
import LedgerDomain
import LedgerIndex
import TransparencyLog

/// `ledger audit members --url … --token-file … --key … ID [--position P]`: the members of a
/// collaboration verified from the ledger's proofs alone (`VerifiedMembers`): the lookup fetched,
/// every link checked with the log's key, the listed events folded with the domain's rules.
struct VerifiedMembersCommand {
    let url: String
    let tokenFile: String?
    let key: String?
    let collaboration: String
    let position: Int64?

    func run() async throws {
        guard let base = URL(string: url), base.scheme == "http" || base.scheme == "https", base.host != nil else {
            throw ValidationError("--url must be an http or https URL, e.g. http://127.0.0.1:8080")
        }
        guard let tokenFile else { throw ValidationError("--token-file is required with --url: an auditor's or the owner's token") }
        guard let key else {
            throw ValidationError("--key (or LEDGER_LOG_KEY) is required: the verifier key the checkpoint must be signed with")
        }
        let verifier = try NoteVerifier(key)
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw ValidationError("\(tokenFile) holds no token") }
        let lookup = try await LedgerClient(baseURL: base, token: token).lookup(collaboration: collaboration)
        do {
            let (report, state) = try VerifiedMembers.fold(lookup, key: verifier, collaboration: collaboration, at: position)
            let through = position ?? report.revisionSize
            guard let state else {
                print("audit members: verified: no collaboration \(collaboration) among positions 1 … \(through)")
                return
            }
            print(
                "audit members: verified, \(collaboration) at position \(through): \(report.positions.filter { $0 <= through }.count) event(s), "
                    + "complete through \(report.revisionSize), in the log of \(report.treeSize) events signed by \(verifier.name)")
            Table(
                ["identity", "state", "account", "not before", "not after"],
                state.identities.sorted { $0.key < $1.key }.map { hash, identity in
                    [hash, identity.status.rawValue, identity.account ?? "-", identity.notBefore ?? "", identity.notAfter ?? ""]
                }
            ).print()
        } catch {
            print("audit members: FAILED: \(error)")
            throw ExitCode(2)
        }
    }
}
