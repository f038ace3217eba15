import Foundation

/// The `ledger` executable built next to the test bundle, for tests that start the real binary
/// (its commands, its flags, its exit status).
public func ledgerBinary() -> String {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ledger").path
}
