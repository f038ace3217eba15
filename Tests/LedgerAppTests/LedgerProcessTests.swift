import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerTokens
import Logging
import ServiceLifecycle
import Testing
import TransparencyLog

@testable import LedgerApp

/// The one process type: every role runs the pool's metrics and the database watchdog before
/// its own services, and a role missing what it cannot run without is refused before anything
/// connects. Nothing here connects: the address is closed, and the refusals come first.
struct LedgerProcessTests {
    static let logger = Logger(label: "test")
    static let nowhere = DatabaseSettings(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: "none")
    static let signer = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"

    @Test("every role: the pool's metrics and the watchdog first, then the role's services, in their order")
    func everyRoleRunsWhatEveryProcessRuns() async throws {
        let authority = try await TokenAuthority(secret: TokenAuthority.randomSecret())
        let client = Self.nowhere.makeClient(logger: Self.logger)
        for role in LedgerProcess.Role.allCases {
            let process = LedgerProcess(
                role, configuration: LedgerConfiguration(), database: Self.nowhere, authority: authority,
                signer: try NoteSigner(Self.signer))
            let names = process.services(client: client, standby: nil, logger: Self.logger, onRunning: { _ in })
                .map { String(describing: type(of: $0)).components(separatedBy: "<")[0] }
            #expect(names.prefix(2) == ["DatabasePoolMetrics", "DatabaseWatchdog"], "\(role): \(names)")
            #expect(names.count > 2, "\(role) runs services of its own")
            #expect(names.contains("Application") == role.servesHTTP, "\(role): \(names)")
        }
    }

    @Test("the pools are named after the role and the process, as pg_stat_activity shows them")
    func applicationName() {
        let process = LedgerProcess(.verifier, configuration: LedgerConfiguration(), database: Self.nowhere)
        #expect(process.applicationName == "ledger verifier \(ProcessInfo.processInfo.processIdentifier)")
    }

    /// An HTTP role without a token authority, a checkpointer without a key, serving a role without
    /// HTTP: refused before connecting.
    @Test("refused before connecting: an HTTP role without tokens, a keyless checkpointer, a role without HTTP")
    func refusals() async throws {
        let configuration = LedgerConfiguration()
        for role in [LedgerProcess.Role.serve, .api] {
            let error = await #expect(throws: LedgerProcess.Incomplete.self) {
                try await LedgerProcess(role, configuration: configuration, database: Self.nowhere).run(logger: Self.logger)
            }
            #expect(error?.description.contains("token authority") == true)
        }
        let unsigned = await #expect(throws: LedgerProcess.Incomplete.self) {
            try await LedgerProcess(.checkpointer, configuration: configuration, database: Self.nowhere).run(logger: Self.logger)
        }
        #expect(unsigned?.description.contains("signing key") == true)
        let quiet = await #expect(throws: LedgerProcess.Incomplete.self) {
            try await LedgerProcess(.project, configuration: configuration, database: Self.nowhere).serving(logger: Self.logger) { _ in }
        }
        #expect(quiet?.description.contains("serves HTTP") == true)
    }
}
