import ArgumentParser
import LedgerBench

/// `ledger-bench`: the benchmarks, in an executable of their own so that the shipped `ledger`
/// links none of them. `Bench` is the root command: `ledger-bench append` is what
/// `ledger bench append` was (`./scripts/ledger bench append` runs it).
@main
enum LedgerBenchMain {
    static func main() async {
        await Bench.main()
    }
}
