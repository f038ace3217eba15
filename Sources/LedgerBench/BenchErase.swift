import ArgumentParser
import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import LedgerWire
import Logging
import PostgresNIO

/// SPEC "Personal data and erasure": how long erasing an account that appears in many events
/// takes while writers go on, and what it costs them.
struct BenchErase: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase",
        abstract:
            "Erase an account that appears in 10,000 events while 16 writers append: the erasure's time, and the writers' rate during it beside their rate just before.",
        discussion: """
            Each round makes a new account appear in --events events (a tenth of them collaborations \
            it starts, with a title, handle and name each; the rest highlights it posts), through \
            the commands apps use. Then 16 writers append single events for --seconds; halfway, \
            the account is erased (PrivacyOffice, as POST /v1/privacy/erasures: one transaction and \
            the vacuum of the erasable tables).
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Rounds; medians are reported.") var rounds = 3
    @Option(help: "Events naming the account.") var events = 10_000
    @Option(help: "Seconds the writers append each round; the erasure starts halfway.") var seconds = 4.0

    func run() async throws {
        let quiet = Logs.quiet()
        print("ledger bench erase: \(rounds) rounds, an account in \(events) events, 16 writers for \(seconds) s")
        try await target.run(logger: quiet) { settings in
            try await settings.withClient(logger: quiet, maxConnections: 40) { client in
                let store = EventStore(client: client, logger: quiet)
                var (erasures, before, during): ([Double], [Double], [Double]) = ([], [], [])
                for round in 1...rounds {
                    let account = "subject-\(round)@example.com"
                    try await Self.appear(account, in: events, store: store)
                    let (erased, rateBefore, rateDuring) = try await erase(account, store: store, round: round)
                    erasures.append(erased)
                    before.append(rateBefore)
                    during.append(rateDuring)
                    print(
                        String(
                            format: "  round %d: erased in %.0f ms; writers %.0f events/s before, %.0f during", round, erased, rateBefore,
                            rateDuring))
                }
                print("")
                print("medians of \(rounds) rounds")
                print(
                    String(
                        format: "  erasure of an account in %d events    %8.0f ms (target: 2,000 ms at most)", events,
                        Stats.median(erasures)))
                print(
                    String(
                        format: "  16 writers during the erasure         %8.0f events/s   before it %8.0f events/s   ratio %.2f",
                        Stats.median(during), Stats.median(before), Stats.median(during) / Stats.median(before)))
            }
        }
    }

    /// The account starts a tenth of `events` collaborations and posts the rest as highlights,
    /// 16 at a time, through CollaborationCommands.
    static func appear(_ account: String, in events: Int, store: EventStore) async throws {
        let service = CollaborationCommands(store: store, publicBaseURL: "https://bench.invalid")
        let caller = Caller(account: account)
        let starts = max(1, events / 10)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    let mine = stride(from: worker, to: starts, by: 16)
                    let highlightsEach = (events - starts) / starts
                    for n in mine {
                        let command = StartCollaboration(
                            localIdentifier: "doc-\(n)", title: "Plan \(n) of \(account)", initiatorHandle: account,
                            initiatorName: "Subject \(n)")
                        let started = try await service.start(command, caller: caller, idempotencyKey: nil, requestId: "bench")
                        for _ in 0..<(highlightsEach + (n < (events - starts) % starts ? 1 : 0)) {
                            _ = try await service.postHighlight(
                                collaborationId: started.collaborationId, kind: .change, trigger: "edit", mentioned: nil, caller: caller,
                                requestId: "bench")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// 16 writers append single events for `seconds`; halfway the account is erased. Returns
    /// the erasure's milliseconds, and the writers' rate in the second before it and during it
    /// (from each append's acknowledgement time).
    func erase(_ account: String, store: EventStore, round: Int) async throws -> (Double, Double, Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let office = PrivacyOffice(store: store)
        let data = #"{"rootHash":"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=","kind":"bench"}"#
        let meta = EventMetadata(actor: "bench").json()
        async let acks = withThrowingTaskGroup(of: [ContinuousClock.Instant].self) { group in
            for w in 0..<16 {
                group.addTask {
                    var (version, acks): (Int64, [ContinuousClock.Instant]) = (0, [])
                    while clock.now < deadline {
                        let result = try await store.append(
                            .init(
                                streamId: "bench-erase-\(round)-\(w)", expectedVersion: .exact(version),
                                events: [NewEvent(type: "BenchEvent", data: data, metadata: meta)]))
                        version = result.version
                        acks.append(clock.now)
                    }
                    return acks
                }
            }
            return try await group.reduce([], +)
        }
        try await Task.sleep(until: start + .milliseconds(Int(seconds * 500)))
        let erasing = clock.now
        _ = try await office.erase(account: account, reason: "bench", requester: "bench-officer")
        let erased = clock.now
        let all = try await acks
        let span = erased - erasing
        let during = all.filter { $0 >= erasing && $0 < erased }.count
        let before = all.filter { $0 >= erasing - .seconds(1) && $0 < erasing }.count
        return (span.seconds * 1000, Double(before), Double(during) / span.seconds)
    }
}
