import ArgumentParser
import Foundation
import LedgerClient
import LedgerDomain
import LedgerIndex
import TransparencyLog

/// `ledger audit members --url … --token-file … --key … ID [--position P | --at T]`: the members
/// of a collaboration verified from the ledger's proofs alone (`VerifiedMembers`): the lookup
/// fetched, every link checked with the log's key, the listed events folded with the domain's
/// rules (at T: those recorded by then, each identity's state read as of T).
struct VerifiedMembersCommand {
    let url: String
    let tokenFile: String?
    let key: String?
    let collaboration: String
    let position: Int64?
    /// A time, in microseconds since the epoch.
    let at: Int64?

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
        let client = LedgerClient(baseURL: base, token: token)
        // Fetched first: a refusal of the request is the ledger's answer, not a failed check.
        let lookup =
            if let at { try await client.lookup(collaboration: collaboration, at: RecordedTime.date(micros: at)) } else {
                try await client.lookup(collaboration: collaboration)
            }
        do {
            let (report, state) =
                if let at { try VerifiedMembers.fold(lookup, key: verifier, collaboration: collaboration, recordedBy: at) } else {
                    try VerifiedMembers.fold(lookup, key: verifier, collaboration: collaboration, at: position)
                }
            let through = at == nil ? position ?? report.revisionSize : report.recordedThrough ?? 0
            let moment = at.map { "at \(RecordedTime.text(micros: $0)) (position \(through))" } ?? "at position \(through)"
            guard let state else {
                print("audit members: verified: no collaboration \(collaboration) among positions 1 … \(through)")
                return
            }
            print(
                "audit members: verified, \(collaboration) \(moment): \(report.positions.filter { $0 <= through }.count) event(s), "
                    + "complete through \(report.revisionSize), in the log of \(report.treeSize) events signed by \(verifier.name)")
            Table(
                ["identity", "state", "account", "not before", "not after"],
                state.identities.sorted { $0.key < $1.key }.map { hash, identity in
                    [
                        hash, at.map { VerifiedMembers.status(identity, at: $0) } ?? identity.status.rawValue, identity.account ?? "-",
                        identity.notBefore ?? "", identity.notAfter ?? "",
                    ]
                }
            ).print()
        } catch {
            print("audit members: FAILED: \(error)")
            throw ExitCode(2)
        }
    }
}
