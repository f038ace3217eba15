import Foundation
import LedgerConfiguration
import LedgerPostgres

/// The `ledger` executable built next to the test bundle, for tests that start the real binary
/// (its commands, its flags, its exit status).
public func ledgerBinary() -> String {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ledger").path
}

/// `ledger demo --url` against a running ledger whose tokens are signed with `secret`: the SDK's
/// whole life cycle, which fails (a non-zero status) on any refusal it does not expect and on
/// evidence that does not verify.
public func ledgerDemo(against baseURL: URL, secret: String) async throws -> ProcessRunner.Output {
    var environment = ProcessInfo.processInfo.environment
    environment[Setting.jwtSecret.variable] = secret
    return try await ProcessRunner.run(ledgerBinary(), ["demo", "--url", baseURL.absoluteString], environment: environment)
}
