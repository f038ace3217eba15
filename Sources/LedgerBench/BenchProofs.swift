import ArgumentParser
import Foundation
import LedgerApp
import LedgerConfiguration
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import Logging
import PostgresNIO
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The verifiable log at scale: building the tree of an existing log (the backfill after an
/// upgrade) and `log verify --checkpoint`, each beside a raw read of the same events; then
/// inclusion and consistency proofs over HTTP at 16 clients beside the HTTP floor.
struct BenchProofs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proofs",
        abstract:
            "Tree backfill and log verify over a generated log beside a raw read; inclusion and consistency proofs over HTTP at 16 clients beside the HTTP floor."
    )

    @OptionGroup var target: BenchTarget
    @Option(help: "Events to generate (realistic collaborations of about 30 events).") var events = 1_000_000
    @Option(help: "Rounds of the HTTP phases; medians are reported.") var rounds = 3
    @Option(help: "Requests each of the 16 clients makes per HTTP phase.") var requests = 500

    func run() async throws {
        let quiet = Logs.quiet()
        let (events, rounds, requests) = (events, rounds, requests)
        try await target.run(logger: quiet) { settings in
            try await settings.withClient(logger: quiet, maxConnections: 40) { client in
                let store = EventStore(client: client, logger: quiet)
                print("ledger bench proofs: generating \(events) events…")
                try await BenchReplay.generate(store, events: events, large: 1_000)
                try await client.query("VACUUM (ANALYZE) ledger_events", logger: quiet)
                let head = try await store.head().position
                let raw = try await BenchReplay.rawRead(client, logger: quiet)
                print(String(format: "  %lld events; raw sequential read (PostgresNIO, all columns): %.0f events/s", head, raw))

                // The backfill: a checkpointer finds the whole log outside its tree.
                let signer = try NoteSigner(name: "bench.local/ledger")
                let tree = LogTree(client: client, logger: quiet)
                let started = ContinuousClock.now
                let hub = NotificationHub(client: client, channel: EventStore.channel, logger: quiet)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await hub.run() }
                    group.addTask { try await Checkpointer(client: client, signer: signer, events: hub, logger: quiet).run() }
                    defer { group.cancelAll() }
                    _ = try await tree.checkpoint(atLeast: head, within: .seconds(600))
                }
                let backfill = Double(head) / (ContinuousClock.now - started).seconds
                let saved = try Checkpoint.open(try await tree.checkpoint(atLeast: head, within: .zero).note, verifier: signer.verifier)

                let verifyStarted = ContinuousClock.now
                let report = try await LogVerification(store: store, tree: tree).run(saved: saved)
                let verify = Double(report.checked) / (ContinuousClock.now - verifyStarted).seconds
                guard report.failure == nil, report.checkpointFailure == nil else {
                    throw ValidationError("log verify failed on the bench log")
                }

                print(String(format: "  tree backfill                  %10.0f events/s   ratio to raw read %.2f", backfill, backfill / raw))
                print(String(format: "  log verify --checkpoint        %10.0f events/s   ratio to raw read %.2f", verify, verify / raw))
                try await Self.http(settings, size: saved.size, rounds: rounds, requests: requests, logger: quiet)
            }
        }
    }

    /// The HTTP phases on `ledger api`'s services (no workers competing for the cores).
    static func http(_ settings: DatabaseSettings, size: Int64, rounds: Int, requests: Int, logger: Logger) async throws {
        let authority = try await TokenAuthority(secret: TokenAuthority.randomSecret())
        var configuration = LedgerConfiguration()
        configuration.port = 0
        try await LedgerProcess(.api, configuration: configuration, database: settings, authority: authority).serving(logger: logger) {
            running in
            let baseURL = running.baseURL
            let token = try await authority.issue(account: "auditor", roles: ["auditor"])
            var floors: [BenchVerify.Outcome] = []
            var keys: [BenchVerify.Outcome] = []
            var inclusions: [BenchVerify.Outcome] = []
            var consistencies: [BenchVerify.Outcome] = []
            for round in 1...rounds {
                floors.append(try await BenchVerify.httpFloor(clients: 16, requestsEach: requests, baseURL: baseURL))
                keys.append(try await proofRate(baseURL, token: token, requests: requests) { _ in "/v1/log/key" })
                inclusions.append(
                    try await proofRate(baseURL, token: token, requests: requests) { _ in
                        "/v1/log/proofs/inclusion?position=\(Int64.random(in: 1 ... size))&treeSize=\(size)"
                    })
                consistencies.append(
                    try await proofRate(baseURL, token: token, requests: requests) { _ in
                        "/v1/log/proofs/consistency?from=\(Int64.random(in: 1 ..< size))&to=\(size)"
                    })
                print(
                    String(
                        format:
                            "  round %d: HTTP floor %.0f/s, one-row read %.0f/s, inclusion %.0f/s (p99 %.1f ms), consistency %.0f/s (p99 %.1f ms)",
                        round, floors.last!.rate, keys.last!.rate, inclusions.last!.rate, inclusions.last!.p99, consistencies.last!.rate,
                        consistencies.last!.p99))
            }
            let floor = Stats.median(floors.map(\.rate))
            print("")
            print("medians of \(rounds) rounds, 16 clients, tree of \(size) events:")
            print(String(format: "  HTTP floor (GET /health)       %10.0f req/s", floor))
            for (name, outcomes) in [
                ("one-row read (GET /v1/log/key)", keys), ("inclusion proofs", inclusions), ("consistency proofs", consistencies),
            ] {
                let rate = Stats.median(outcomes.map(\.rate))
                print(
                    String(
                        format: "  %@ %10.0f req/s   ratio to floor %.2f   p50 %.2f ms   p99 %.2f ms   CPU %@",
                        name.padding(toLength: 30, withPad: " ", startingAt: 0), rate, rate / floor, Stats.median(outcomes.map(\.p50)),
                        Stats.median(outcomes.map(\.p99)), outcomes[outcomes.count / 2].cpuText))
            }
        }
    }

    /// 16 clients, each on its own connection, making `requests` GETs of `path(n)`.
    static func proofRate(
        _ baseURL: URL, token: String, requests: Int, _ path: @escaping @Sendable (Int) -> String
    ) async throws -> BenchVerify.Outcome {
        var transports: [NIOTransport] = []
        for _ in 0..<16 { transports.append(try await NIOTransport.connect(host: "127.0.0.1", port: baseURL.port ?? 80)) }
        let connections = transports
        let outcome = try await BenchVerify.timed(calls: Array(repeating: requests, count: 16)) { worker, n in
            var request = URLRequest(url: URL(string: baseURL.absoluteString + path(n))!)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (body, status) = try await connections[worker].send(request)
            guard status == 200 else {
                throw ValidationError("\(request.url!) answered \(status): \(String(decoding: body, as: UTF8.self))")
            }
        }
        for transport in transports { await transport.close() }
        return outcome
    }
}
