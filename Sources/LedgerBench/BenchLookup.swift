import ArgumentParser
import Foundation
import LedgerApp
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerIndex
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import LedgerWire
import Logging
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A lookup's latency (issue 67, item 6): `GET /v1/audit/lookup` of a collaboration of about
/// 1,000 events in a log of --events, through the real server, beside the plain read of the same
/// events (`GET …/history?limit=1000`) in the same run; and the offline check of one answer.
struct BenchLookup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract:
            "A collaboration's lookup with its proof (about 1,000 events) beside its plain history read: p50/p99 (target p99 50 ms), and the offline check.",
        discussion: """
            A ledger runs in this process with its index recorder (LEDGER_INDEX=yes) on a throwaway \
            embedded PostgreSQL. The log is generated first (--events, realistic collaborations, as \
            `replay` does), then one collaboration gets --members identities added (an event each). \
            Once a recorded revision under the published checkpoint covers it, one client asks \
            --calls times, alternating a lookup and a history read of the same events, over one \
            keep-alive connection each.
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Events in the log before the collaboration.") var events = 100_000
    @Option(help: "Identities added to the collaboration (an event each).") var members = 999
    @Option(help: "Lookups timed (and as many history reads).") var calls = 200

    func validate() throws {
        guard events >= 0, (1...9_999).contains(members), calls >= 10 else {
            throw ValidationError("--events at least 0, --members 1 to 9,999, --calls at least 10")
        }
    }

    func run() async throws {
        let quiet = Logs.quiet()
        let (events, members, calls) = (events, members, calls)
        var configuration = LedgerConfiguration()
        configuration.index = true
        let signer = try NoteSigner(name: "bench.example/lookup")
        try await target.run(logger: quiet) { settings in
            try await LocalLedger.run(settings, logger: quiet, configuration: configuration, signer: signer) { ledger in
                print("ledger bench lookup: \(events) events, then a collaboration of \(members + 1) events; \(calls) calls of each")
                try await BenchReplay.generate(EventStore(client: ledger.client, logger: quiet), events: events, large: 0)
                let (id, last) = try await Self.collaboration(ledger, members: members)
                let auditor = try await ledger.authority.issue(account: "auditor", roles: ["auditor"])
                let client = LedgerClient(baseURL: ledger.baseURL, token: auditor)
                // Served: a revision under the published checkpoint, not only recorded.
                try await LoadProcess.poll("a lookup covering \(last)", within: .seconds(120), every: .milliseconds(100)) {
                    do {
                        return try await client.lookup(collaboration: id).revision.logSize >= last
                    } catch let error as LedgerError where error.code == "not_checkpointed" {
                        return false  // no revision recorded under the published checkpoint yet
                    }
                }
                let timed = try await Self.timed(ledger, id: id, token: auditor, calls: calls)
                let lookup = try await client.lookup(collaboration: id)
                var checks: [Double] = []
                for _ in 0..<20 {
                    let started = ContinuousClock.now
                    _ = try LookupVerifier.verify(lookup, key: signer.verifier, asked: .collaboration(id), through: last)
                    checks.append((ContinuousClock.now - started).seconds * 1000)
                }
                let size = try JSONEncoder().encode(lookup).count
                print("")
                for (name, values) in [("lookup with its proof", timed.lookups), ("history read, the same events", timed.history)] {
                    let sorted = values.sorted()
                    print(
                        String(
                            format: "  %-32@ p50 %6.1f ms   p99 %6.1f ms", name as NSString, Stats.percentile(sorted, 0.5),
                            Stats.percentile(sorted, 0.99)))
                }
                print(
                    String(
                        format: "  lookup / history: p50 ratio %.2f, p99 ratio %.2f (target: lookup p99 50 ms); %d events listed, %.0f KB",
                        Stats.median(timed.lookups) / Stats.median(timed.history),
                        Stats.percentile(timed.lookups.sorted(), 0.99) / Stats.percentile(timed.history.sorted(), 0.99),
                        lookup.positions.count, Double(size) / 1024))
                print(String(format: "  the answer checked offline (LookupVerifier): p50 %.1f ms", Stats.median(checks)))
            }
        }
    }

    /// A collaboration with `members` identities added, 100 a command: its id and last position.
    static func collaboration(_ ledger: LocalLedger.Running, members: Int) async throws -> (String, Int64) {
        let authority = ledger.authority
        let owner = LedgerClient(baseURL: ledger.baseURL) { try await authority.issue(account: "owner") }
        let id = try await owner.prepareCollaboration(
            localIdentifier: "lookup", title: "Lookup", initiator: Initiator(handle: "owner@example.com")
        ).identifier
        var last: Int64 = 0
        for start in stride(from: 0, to: members, by: 100) {
            let people = (start..<min(members, start + 100)).map { _ in SimulatedPerson(collaborationId: id, devices: 1) }
            last = try await owner.updateParticipants(added: people.map(\.rootHashData), in: id).position
        }
        return (id, last)
    }

    /// Milliseconds of each lookup and each history read, alternating, one connection each.
    static func timed(_ ledger: LocalLedger.Running, id: String, token: String, calls: Int) async throws -> (
        lookups: [Double], history: [Double]
    ) {
        let (host, port) = (ledger.baseURL.host ?? "127.0.0.1", ledger.baseURL.port ?? 80)
        let connections = (try await NIOTransport.connect(host: host, port: port), try await NIOTransport.connect(host: host, port: port))
        func request(_ path: String) -> URLRequest {
            var request = URLRequest(url: URL(string: path, relativeTo: ledger.baseURL)!.absoluteURL)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            return request
        }
        let (lookup, history) = (request("v1/audit/lookup?collaboration=\(id)"), request("v1/collaborations/\(id)/history?limit=1000"))
        var times: (lookups: [Double], history: [Double]) = ([], [])
        for _ in 0..<calls {
            for (n, connection, call) in [(0, connections.0, lookup), (1, connections.1, history)] {
                let started = ContinuousClock.now
                let (_, status) = try await connection.send(call)
                guard status == 200 else { throw ValidationError("\(call.url?.path ?? "") answered \(status)") }
                let ms = (ContinuousClock.now - started).seconds * 1000
                if n == 0 { times.lookups.append(ms) } else { times.history.append(ms) }
            }
        }
        await connections.0.close()
        await connections.1.close()
        return times
    }
}
