import ArgumentParser
import Foundation
import LedgerApp
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTelemetry
import LedgerTokens
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct BenchReplica: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replica",
        abstract: "Read scaling: member reads/s at 16 clients against the primary alone, then against primary + hot standby, in one run.",
        discussion: """
            A throwaway primary and a streaming-replication hot standby of it (pg_basebackup -R) on \
            this machine; a ledger in this process, without then with LEDGER_READ_DATABASE_URL's \
            equivalent. Each of 16 clients (a NIO connection each) reads a page of a collaboration's \
            members (GET /v1/collaborations/{id}/members) as fast as it is answered. On one machine the \
            standby shares the cores with the primary: the figure shows what the reads cost, not what a \
            second machine would add.
            """)

    @Option(help: "Seconds each phase lasts.") var seconds = 10
    @Option(help: "Members of the collaboration read.") var members = 200

    func run() async throws {
        let quiet = Logs.quiet()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-replica-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let primary = EmbeddedPostgres(
            options: .init(dataDirectory: folder.appendingPathComponent("primary"), binaries: Setting.pgBin.value()), logger: quiet)
        let standby = EmbeddedPostgres(
            options: .init(dataDirectory: folder.appendingPathComponent("standby"), binaries: Setting.pgBin.value()), logger: quiet)
        let owner = try await primary.start()
        try await stopping(primary) {
            let id = try await LocalLedger.run(owner, logger: quiet) { ledger in try await Self.prepare(ledger, members: members) }
            let replica = try await standby.startStandby(of: owner)
            try await stopping(standby) {
                print("ledger bench replica: 16 clients, a page of 100 of \(members) members, \(seconds) s a phase")
                let alone = try await LocalLedger.run(owner, logger: quiet) { ledger in
                    try await Self.reads(ledger, id, seconds: seconds)
                }
                print(
                    String(format: "  primary alone:       %7.0f reads/s   p50 %5.1f ms   p99 %5.1f ms", alone.rate, alone.p50, alone.p99))
                let both = try await LocalLedger.run(owner, logger: quiet, standby: replica) { ledger in
                    try await Self.reads(ledger, id, seconds: seconds)
                }
                print(
                    String(
                        format: "  primary + standby:   %7.0f reads/s   p50 %5.1f ms   p99 %5.1f ms   ratio %.2f", both.rate, both.p50,
                        both.p99, both.rate / alone.rate))
            }
        }
    }

    /// A collaboration with `members` identities, and the views caught up with it.
    static func prepare(_ ledger: LocalLedger.Running, members: Int) async throws -> String {
        let authority = ledger.authority
        let owner = LedgerClient(baseURL: ledger.baseURL) { try await authority.issue(account: "owner") }
        let prepared = try await owner.prepareCollaboration(
            localIdentifier: "doc", title: "Doc", initiator: Initiator(handle: "owner@example.com"))
        var last: Int64 = 0
        for start in stride(from: 0, to: members, by: 100) {
            let people = (start..<min(members, start + 100)).map { _ in SimulatedPerson(collaborationId: prepared.identifier, devices: 1) }
            last = try await owner.updateParticipants(added: people.map(\.rootHashData), in: prepared.identifier).position
        }
        _ = try await owner.members(of: prepared.identifier, minPosition: last)
        return prepared.identifier
    }

    /// 16 clients reading the members' first page for `seconds`.
    static func reads(_ ledger: LocalLedger.Running, _ id: String, seconds: Int) async throws -> BenchVerify.Outcome {
        let token = try await ledger.authority.issue(account: "owner")
        var transports: [NIOTransport] = []
        for _ in 0..<16 {
            transports.append(try await NIOTransport.connect(host: ledger.baseURL.host ?? "127.0.0.1", port: ledger.baseURL.port ?? 80))
        }
        var request = URLRequest(url: ledger.baseURL.appendingPathComponent("v1/collaborations/\(id)/members"))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (connections, members, deadline) = (transports, request, ContinuousClock.now + .seconds(seconds))
        let outcome = try await BenchVerify.timed(calls: Array(repeating: Int.max, count: 16), until: deadline) { worker, _ in
            let (_, status) = try await connections[worker].send(members)
            guard status == 200 else { throw ValidationError("GET members answered \(status)") }
        }
        for transport in transports { await transport.close() }
        return outcome
    }
}
