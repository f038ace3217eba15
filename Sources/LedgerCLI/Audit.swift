import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerDomain
import LedgerReadModel
import LedgerStore
import LedgerWire
import Logging
import PostgresNIO
import TransparencyLog

/// Audit queries at the command line, read from the same views the API serves.
struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Audit trails as readable tables: a collaboration's history, access changes, members at a time.",
        subcommands: [History.self, Access.self, Members.self, VerifyEvidence.self])

    static func withService<T: Sendable>(
        _ database: DatabaseOptions, _ body: @Sendable (Reads) async throws -> T
    ) async throws -> T {
        return try await database.withClient { client, logger in
            try await Migrator(client: client, logger: logger).ensureCurrent()
            let store = EventStore(client: client, logger: logger)
            return try await body(ReadClient(primary: client, store: store, logger: logger).reads())
        }
    }

    static func parseTime(_ text: String) throws -> Date {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        throw ValidationError("\(text) is not an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
    }

    /// `text` in whole microseconds (a finer fraction cut toward the past), read exactly: the
    /// log's own unit, for comparing with the times its leaves hold.
    static func parseMicros(_ text: String) throws -> Int64 {
        guard let instant = RFC3339.instant(text) else {
            throw ValidationError("\(text) is not an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
        }
        return RFC3339.micros(instant)
    }

    static func time(_ date: Date) -> String { APIJSON.time(date) }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every event of a collaboration, in log order.")
        @Argument(help: "Collaboration id.") var collaboration: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let history = try await Audit.withService(database) { service in
                // Every page: the command prints the whole history.
                var history = try await service.history(collaboration, caller: .operatorAuditor, limit: PageCursors.maxLimit)
                while let cursor = history.nextCursor {
                    let next = try await service.history(
                        collaboration, caller: .operatorAuditor, limit: PageCursors.maxLimit, cursor: cursor)
                    history.events += next.events
                    history.nextCursor = next.nextCursor
                }
                return history
            }
            Table(
                ["pos", "ver", "time", "event", "actor", "subject"],
                history.events.map { e in
                    let subject = e.data["rootHash"]?.text ?? e.data["title"]?.text ?? e.data["kind"]?.text ?? ""
                    let account = e.data["account"]?.text.map { " → \($0)" } ?? ""
                    return [String(e.position), String(e.version), Audit.time(e.time), e.type, e.actor ?? "", subject + account]
                }
            ).print()
        }
    }

    struct Access: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Who gained and lost access when.")
        @Option(help: "Only this account.") var account: String?
        @Option(help: "Only this collaboration.") var collaboration: String?
        @Option(help: "Only changes at or after this RFC 3339 time.") var since: String?
        @Option(help: "Output: table, csv or ndjson.") var format: String = "table"
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let from = try since.map(Audit.parseTime)
            let (account, collaboration) = (account, collaboration)
            let audit = try await Audit.withService(database) { service in
                var audit = try await service.auditAccess(
                    caller: .operatorAuditor, account: account, collaborationId: collaboration, from: from, to: nil,
                    limit: PageCursors.maxLimit)
                while let cursor = audit.nextCursor {
                    let next = try await service.auditAccess(
                        caller: .operatorAuditor, account: account, collaborationId: collaboration, from: from, to: nil,
                        limit: PageCursors.maxLimit, cursor: cursor)
                    audit.records += next.records
                    audit.nextCursor = next.nextCursor
                }
                return audit
            }
            switch format {
            case "csv": print(AccessAuditText.csv(audit.records), terminator: "")
            case "ndjson": print(try AccessAuditText.ndjson(audit.records), terminator: "")
            case "table":
                Table(
                    ["pos", "time", "collaboration", "account", "change", "reason", "identity", "actor"],
                    audit.records.map { r in
                        [
                            String(r.position), Audit.time(r.time), r.collaborationId, r.accountId, r.change, r.reason ?? "",
                            String(r.rootHash.prefix(12)) + "…", r.actor ?? "",
                        ]
                    }
                ).print()
            default: throw ValidationError("--format must be table, csv or ndjson")
            }
        }
    }

    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A collaboration's members now, or as they stood at a time; with --url, verified from the ledger's proofs alone.",
            discussion: """
                From the database's views by default. With --url, --token-file and --key: the collaboration's \
                lookup (GET /v1/audit/lookup) checked link by link against the log's key, its events folded \
                with the domain's rules, as they stood at --position (default: the answer's revision) or \
                at --at, a time (the events recorded by then, each identity's state read as of it); nothing \
                is taken from the ledger's views. Exits 2 naming the link that does not hold.
                """)
        @Argument(help: "Collaboration id.") var collaboration: String?
        @Option(name: .customLong("collaboration"), help: "Collaboration id (as the argument).") var named: String?
        @Option(
            name: [.customLong("at"), .customLong("as-of")],
            help: "RFC 3339 time: members as they stood then (from the views; verified with --url).") var asOf: String?
        @Option(help: "Verified: the ledger's base URL, e.g. http://127.0.0.1:8080.") var url: String?
        @Option(help: "Verified: a file holding an auditor's or the owner's bearer token.") var tokenFile: String?
        @Option(help: ArgumentHelp(Setting.logKey.help("Verified: the log's verifier key (name+id+key)"))) var key: String?
        @Option(help: "Verified: the position to fold up to (the answer must be complete through it).") var position: Int64?
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            guard (collaboration == nil) != (named == nil) else {
                throw ValidationError("name the collaboration once: ID or --collaboration ID")
            }
            guard url != nil || (tokenFile == nil && position == nil) else {
                throw ValidationError("--token-file and --position are for a verified answer: give --url too")
            }
            guard position == nil || asOf == nil else { throw ValidationError("give --at or --position, not both") }
            if let position, position < 1 { throw ValidationError("--position must be 1 or more") }
        }

        func run() async throws {
            if let url {
                return try await VerifiedMembersCommand(
                    url: url, tokenFile: tokenFile, key: try key ?? loadConfiguration().logKey, collaboration: (collaboration ?? named)!,
                    position: position, at: try asOf.map(Audit.parseMicros)
                ).run()
            }
            let time = try asOf.map(Audit.parseTime)
            let collaboration = (collaboration ?? named)!
            let members = try await Audit.withService(database) { service in
                var members = try await service.members(collaboration, caller: .operatorAuditor, asOf: time, limit: PageCursors.maxLimit)
                while let cursor = members.nextCursor {
                    let next = try await service.members(
                        collaboration, caller: .operatorAuditor, asOf: time, limit: PageCursors.maxLimit, cursor: cursor)
                    members.members += next.members
                    members.nextCursor = next.nextCursor
                }
                return members
            }
            print("members of \(members.collaborationId) (owner \(members.owner)) at position \(members.position):")
            Table(
                ["identity", "state", "account", "invited", "granted"],
                members.members.map { m in
                    [m.rootHash, m.state, m.accountId ?? "-", m.invitedAt.map(Audit.time) ?? "", m.grantedAt.map(Audit.time) ?? ""]
                }
            ).print()
        }
    }
}

extension JSONValue {
    var text: String? { if case .string(let s) = self { return s } else { return nil } }
}
