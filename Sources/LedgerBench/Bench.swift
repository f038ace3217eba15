import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import Logging

/// `ledger-bench`, the benchmarks' own executable (the shipped `ledger` links none of them;
/// `./scripts/ledger bench …` runs this one).
public struct Bench: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "ledger-bench",
        abstract: "Benchmarks that print their figures next to a baseline measured in the same run.",
        subcommands: [
            BenchAppend.self, BenchVerify.self, BenchReplay.self, BenchProofs.self, BenchFeed.self, BenchFeedClients.self,
            BenchReplica.self, BenchCommands.self, BenchShards.self, BenchLoad.self, BenchErase.self, BenchTiles.self, BenchExpiry.self,
            BenchScale.self, BenchIndex.self, BenchIndexAppends.self, BenchLookup.self,
        ])
}

/// Options shared by benchmarks: where to run them.
struct BenchTarget: ParsableArguments {
    @Option(
        help: "Run against this PostgreSQL URL (a database named ledger_bench is recreated there). Default: a throwaway embedded cluster.")
    var databaseURL: String?

    /// Runs `body` on a fresh, migrated bench database; a throwaway cluster (stopped and
    /// deleted afterwards) unless a URL was given.
    func run(logger: Logger, _ body: (DatabaseSettings) async throws -> Void) async throws {
        try await ThrowawayDatabase.run(serverURL: databaseURL, binaries: Setting.pgBin.value(), logger: logger, body)
    }
}

/// Small statistics helpers for benchmark output.
enum Stats {
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// The value at percentile `p` (0 to 1) of values sorted ascending; 0 for none.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    static func format(_ value: Double) -> String {
        String(format: "%10.0f", value)
    }
}
