import ArgumentParser
import Foundation
import LedgerAPI
import LedgerApp
import LedgerClient
import Logging

/// The commands apps send most, over HTTP: starts (an owner, a title, a handle and a name to
/// record) and highlights (an actor), at 16 clients.
struct BenchCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commands",
        abstract: "Starts and highlights over HTTP at 16 clients (rate, p50/p99, CPU per command).",
        discussion: """
            A ledger runs in this process (the services of `ledger serve`) on a throwaway embedded \
            PostgreSQL or --database-url. Each client is its own account on its own connection: \
            it starts collaborations one after the other, then posts highlights on its own.
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Rounds; medians are reported.") var rounds = 3
    @Option(help: "Commands each of the 16 clients sends per phase and round.") var commands = 150

    func run() async throws {
        let quiet = Logs.quiet()
        print("ledger bench commands: \(rounds) rounds, 16 clients, \(commands) commands each per phase")
        var starts: [BenchVerify.Outcome] = []
        var highlights: [BenchVerify.Outcome] = []
        let commands = commands
        try await target.run(logger: quiet) { settings in
            (starts, highlights) = try await LocalLedger.run(settings, logger: quiet, maxConnections: 60) { ledger in
                var starts: [BenchVerify.Outcome] = []
                var highlights: [BenchVerify.Outcome] = []
                for round in 1...rounds {
                    var clients: [LedgerClient] = []
                    var transports: [NIOTransport] = []
                    for c in 0..<16 {
                        let token = try await ledger.authority.issue(account: "bench-\(round)-\(c)")
                        let transport = try await NIOTransport.connect(host: "127.0.0.1", port: ledger.baseURL.port ?? 80)
                        clients.append(LedgerClient(baseURL: ledger.baseURL, transport: transport) { token })
                        transports.append(transport)
                    }
                    let senders = clients
                    starts.append(try await BenchVerify.timed(calls: Array(repeating: commands, count: 16)) { c, n in
                        _ = try await senders[c].prepareCollaboration(
                            localIdentifier: "doc-\(n)", title: "Bench plan \(c)-\(n)",
                            initiator: Initiator(handle: "bench-\(c)@example.com", name: "Bench \(c)"))
                    })
                    var owned: [String] = []
                    for client in clients {
                        owned.append(try await client.prepareCollaboration(
                            localIdentifier: "noticed", title: "Noticed", initiator: Initiator(handle: "bench@example.com")).identifier)
                    }
                    highlights.append(try await BenchVerify.timed(calls: Array(repeating: commands, count: 16)) { [owned] c, _ in
                        _ = try await senders[c].postHighlight(.change, trigger: "edit", in: owned[c])
                    })
                    for transport in transports { await transport.close() }
                    print(String(
                        format: "  round %d: starts %.0f/s (p50 %.1f ms, p99 %.1f ms, CPU %@), highlights %.0f/s (p50 %.1f ms, p99 %.1f ms, CPU %@)",
                        round, starts.last!.rate, starts.last!.p50, starts.last!.p99, starts.last!.cpuText,
                        highlights.last!.rate, highlights.last!.p50, highlights.last!.p99, highlights.last!.cpuText))
                }
                return (starts, highlights)
            }
        }
        print("")
        print("medians of \(rounds) rounds")
        for (name, outcomes) in [("starts, 16 clients    ", starts), ("highlights, 16 clients", highlights)] {
            let machine = outcomes.compactMap(\.cpu.machine)
            print(String(
                format: "  %@  %8.0f commands/s   p50 %6.1f ms   p99 %6.1f ms   machine CPU %@", name,
                Stats.median(outcomes.map(\.rate)), Stats.median(outcomes.map(\.p50)), Stats.median(outcomes.map(\.p99)),
                machine.isEmpty ? "?" : String(format: "%.2f ms", Stats.median(machine))))
        }
    }
}
