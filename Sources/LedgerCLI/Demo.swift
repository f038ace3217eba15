import ArgumentParser
import Foundation
import LedgerApp
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import Logging
import TransparencyLog

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play the whole life cycle with simulated devices through the SDK, then print the audit trail.",
        discussion: """
            With --url it talks to a running ledger (tokens are signed with LEDGER_JWT_SECRET or the \
            development secret in --data-dir); without, it starts a throwaway ledger on an embedded \
            PostgreSQL and deletes it afterwards.
            """)

    @Option(help: ArgumentHelp(Setting.url.help("Base URL of a running ledger, e.g. http://127.0.0.1:8080"))) var url: String?
    @Option(name: .long, help: ArgumentHelp(Setting.dataDir.help("Data folder holding the development secret, with --url")))
    var dataDir: String?

    func run() async throws {
        var configuration = try loadConfiguration()
        if let dataDir { configuration.dataDir = dataDir }
        let quiet = Logs.quiet(configuration)
        if let url = url ?? configuration.url {
            guard let baseURL = URL(string: url) else { throw ValidationError("--url is not a URL") }
            let (secret, _) = try JWTSecret.resolve(configuration, createIfMissing: false)
            try await DemoScript(baseURL: baseURL, authority: try await TokenAuthority(secret: secret)).play()
        } else {
            print("starting a throwaway ledger (embedded PostgreSQL)…")
            try await ThrowawayDatabase.run(serverURL: nil, binaries: configuration.pgBin, logger: quiet) { settings in
                // A checkpointer with a throwaway key, for the evidence at the end.
                try await LocalLedger.run(settings, logger: quiet, signer: try NoteSigner(name: "demo.invalid/ledger")) { ledger in
                    try await DemoScript(baseURL: ledger.baseURL, authority: ledger.authority).play()
                }
            }
        }
    }
}

/// The life cycle of SPEC.md, told step by step.
struct DemoScript {
    let baseURL: URL
    let authority: TokenAuthority

    func client(_ account: String, roles: [String] = []) -> LedgerClient {
        let authority = authority
        return LedgerClient(baseURL: baseURL) { try await authority.issue(account: account, roles: roles) }
    }

    func step(_ text: String) { print("\n▸ \(text)") }
    func say(_ text: String) { print("  \(text)") }

    /// A recipient opens the link on one device: challenge, signed proof, submission.
    func verify(_ account: String, _ person: SimulatedPerson, device: Int, in id: String) async throws -> String {
        let client = client(account)
        let challenge = try await client.challenge(for: id)
        let proof = person.signedProof(challenge: challenge.data, device: device, der: device % 2 == 0)
        do {
            switch try await client.submitProof(
                publicKey: proof.publicKey, publicKeyIndex: proof.publicKeyIndex, inclusionHashes: proof.inclusionHashes,
                signature: proof.signature, challenge: challenge)
            {
            case .granted(_, let accountID, let position): return "granted to \(accountID) (position \(position))"
            case .pending(let requestID, _): return "pending (request \(requestID))"
            }
        } catch let error as LedgerError where error.code == "proof_rejected" {
            return "refused: \(error.reason ?? error.message)"
        }
    }

    func play() async throws {
        let devin = client("devin")
        print("ledger at \(baseURL.absoluteString)")

        step("devin shares a document in Messages: the app prepares the collaboration")
        let prepared = try await devin.prepareCollaboration(
            localIdentifier: "trip-plan.doc", title: "Trip plan", initiator: Initiator(handle: "devin@example.com", name: "Devin"),
            options: ShareOptions(
                summary: "Anyone can make changes",
                groups: [
                    .init(
                        identifier: "permission", title: "Permission", kind: .picker,
                        options: [
                            .init(identifier: "rw", title: "Can make changes", selected: true),
                            .init(identifier: "ro", title: "View only", selected: false),
                        ])
                ]))
        let id = prepared.identifier
        say("collaboration \(id)")
        say("universal link \(prepared.url.absoluteString)")

        step("Messages sends it to alice (2 devices), bob (1) and carol (3): their identities are added")
        let people = [
            ("alice", SimulatedPerson(collaborationId: id, devices: 2)),
            ("bob", SimulatedPerson(collaborationId: id, devices: 1)),
            ("carol", SimulatedPerson(collaborationId: id, devices: 3)),
        ]
        let added = try await devin.updateParticipants(added: people.map { $0.1.rootHashData }, in: id)
        say("added \(added.added.count) identities at position \(added.position)")

        step("recipients open the link; each device proves it belongs to an identity")
        for (account, person) in people {
            for device in 0..<person.deviceKeys.count {
                say("\(account), device \(device + 1): \(try await verify(account, person, device: device, in: id))")
            }
        }
        step("mallory forwards bob's proof material from another account")
        say("mallory: \(try await verify("mallory", people[1].1, device: 0, in: id))")

        step("highlights: alice edits, carol mentions bob")
        try await client("alice").postHighlight(.change, trigger: "edit", in: id)
        let mentioned = try await client("carol").postHighlight(.mention, mentioning: people[1].1.rootHashData, in: id)
        // Reads come from the projections: ask for them to have reached the last write.
        let bobSees = try await client("bob").highlights(in: id, minPosition: mentioned)
        say(
            "bob sees \(bobSees.highlights.count) notices: \(bobSees.highlights.map { n in n.trigger.map { "\(n.kind)/\($0)" } ?? n.kind }.joined(separator: ", "))"
        )

        let beforeRemoval = try await devin.members(of: id, minPosition: mentioned)
        step("devin removes alice's identity")
        let removed = try await devin.updateParticipants(removed: [people[0].1.rootHashData], in: id)
        say("revoked accounts: \(removed.revokedAccounts.joined(separator: ", "))")
        say("alice tries again: \(try await verify("alice", people[0].1, device: 0, in: id))")

        step("members now, and as they were before the removal (time travel)")
        let now = try await devin.members(of: id, minPosition: removed.position)
        let then = try await devin.members(of: id, atPosition: beforeRemoval.position)
        printMembers("now (position \(now.position))", now)
        printMembers("at position \(then.position)", then)

        step("audit trail of the collaboration (the log, in order)")
        let history = try await devin.history(of: id)
        Table(
            ["pos", "time", "event", "actor"],
            history.events.map { e in
                [String(e.position), Self.time(e.time), e.type, e.actor ?? ""]
            }
        ).print()

        step("who gained and lost access when (auditor)")
        try await printAccess(id, minPosition: removed.position)

        step("bob asks to be forgotten: first what is held about him, then the erasure (role privacy)")
        let auditor = client("auditor", roles: ["auditor"])
        // On shards a position is its shard's: the audit's record names the shard (nil on one database).
        let grant = try await auditor.auditAccess(account: "bob", collaboration: id).records.first
        let (bobsGrant, shard) = (grant?.position ?? 1, grant?.shard)
        // On shards the evidence waits for the top log to record the shard's checkpoint: the server
        // answers 503 `not_checkpointed` after 5 s, and a client tries again after its Retry-After
        // (1 s), for a minute here.
        let evidence = { @Sendable in
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                do {
                    if let shard { return try await auditor.evidence(position: bobsGrant, shard: shard) }
                    return try await auditor.evidence(position: bobsGrant)
                } catch let error as LedgerError where error.code == "not_checkpointed" && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .seconds(1))
                }
            }
        }
        let savedEvidence = try await evidence()
        let privacy = client("privacy-officer", roles: ["privacy"])
        let held = try await privacy.exportPersonalData(account: "bob")
        for part in held.shards ?? [held] {
            say(
                "held for bob\(part.shard.map { " on shard \($0)" } ?? ""): pseudonym \(part.pseudonym), named by the events at \(part.positions.map(String.init).joined(separator: ", "))"
            )
        }
        let erasure = try await privacy.erasePersonalData(account: "bob", reason: "DEMO-1")
        // The erasure on the collaboration's shard (on one database, the one answer).
        let erased = (erasure.shards ?? [erasure]).first { $0.shard == shard }?.position ?? 0
        say("erased at position \(erased): the log keeps bob's pseudonym, and nothing the ledger keeps says whose it was")
        let again = try await privacy.erasePersonalData(account: "bob", reason: "DEMO-1")
        say("asked again: held \(again.held) (nothing is left to find bob by)")

        step("the same audit trail after the erasure")
        try await printAccess(id, minPosition: erased)
        let key = try NoteVerifier(try await auditor.logKey())
        for (when, evidence) in [("saved before", savedEvidence), ("fetched after", try await evidence())] {
            let report = try EvidenceVerifier.verify(evidence, key: key)
            say(
                "evidence of bob's grant \(when) the erasure: in the signed log of \(report.treeSize) events\(report.shard.map { " of shard \($0), recorded in the top log" } ?? ""), device proof verified: \(report.deviceProofChecked)"
            )
        }

        step("the same, seen in the auditor's console (sign in with a token: `ledger token --account devin`, or --role auditor)")
        say(baseURL.appendingPathComponent("console").absoluteString + "#/collaborations/\(id)")
    }

    func printAccess(_ id: String, minPosition: Int64) async throws {
        let audit = try await client("auditor", roles: ["auditor"]).auditAccess(collaboration: id, minPosition: minPosition)
        Table(
            ["pos", "time", "account", "change", "reason", "identity"],
            audit.records.map { r in
                [String(r.position), Self.time(r.time), r.accountId, r.change, r.reason ?? "", String(r.rootHash.prefix(12)) + "…"]
            }
        ).print()
    }

    func printMembers(_ title: String, _ members: Members) {
        say("\(title):")
        for m in members.members {
            say("  \(m.rootHash.prefix(12))…  \(m.state.padding(toLength: 8, withPad: " ", startingAt: 0)) \(m.accountId ?? "-")")
        }
    }

    static func time(_ date: Date) -> String {
        date.formatted(.iso8601.time(includingFractionalSeconds: true))
    }
}

/// A plain text table for terminals.
struct Table {
    let header: [String]
    let rows: [[String]]

    init(_ header: [String], _ rows: [[String]]) {
        self.header = header
        self.rows = rows
    }

    func print() {
        let widths = header.indices.map { i in ([header[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        Swift.print("  " + line(header))
        Swift.print("  " + line(widths.map { String(repeating: "-", count: $0) }))
        for row in rows { Swift.print("  " + line(row)) }
    }
}
