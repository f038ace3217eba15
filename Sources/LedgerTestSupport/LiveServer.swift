import Foundation
import LedgerApp
import LedgerConfiguration
import LedgerClient
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import LedgerWebhooks
import TransparencyLog
import Logging
import PostgresNIO

/// The services `ledger serve` (or `ledger api`) runs, on a fresh database and a free port,
/// and SDK clients signed in as any account.
public struct LiveServer: Sendable {
    public let baseURL: URL
    public let authority: TokenAuthority
    public let db: PostgresClient
    /// The database, as its owner reaches it (for pg_dump and the like).
    public let settings: DatabaseSettings
    /// The checkpointer's key.
    public let signer: NoteSigner

    public func client(_ account: String, roles: [String] = []) -> LedgerClient {
        let authority = authority
        return LedgerClient(baseURL: baseURL, transport: HTTPClientTransport()) { try await authority.issue(account: account, roles: roles) }
    }

    public enum Roles: Sendable { case allInOne, apiOnly }

    public static func run(
        _ roles: Roles = .allInOne, configuration: LedgerConfiguration = .testing(),
        deliveries: WebhookDeliverer.Settings = .init(), signer: NoteSigner = try! NoteSigner(name: "live.test/ledger"),
        witnesses: WitnessPolicy? = nil, publishedFile: URL? = nil, _ body: @Sendable (LiveServer) async throws -> Void
    ) async throws {
        LedgerMetrics.bootstrap()  // as `ledger serve` does: /metrics shows what the services record
        try await withTestStore { _, owner, settings in
            let logger = Logger(label: "live-server")
            let authority = try await TokenAuthority(secret: "live-server-test-secret-\(UUID())")
            // As in production: the server connects as a member of ledger_service, not as the owner.
            let service = try await PostgresAdmin.serviceLogin("ledger_app_\(UInt32.random(in: 0 ... .max))", on: settings, logger: logger)
            try await withClient(service) { client in
                let store = EventStore(client: client, logger: logger)
                return try await LedgerServer.serving(logger: logger) { onRunning in
                    switch roles {
                    case .allInOne:
                        LedgerServer.allInOne(
                            client: client, store: store, authority: authority, configuration: configuration,
                            signer: signer, witnesses: witnesses, publishedFile: publishedFile, deliveries: deliveries, logger: logger, onRunning: onRunning)
                    case .apiOnly:
                        LedgerServer.apiOnly(
                            client: client, store: store, authority: authority, configuration: configuration, logger: logger,
                            onRunning: onRunning)
                    }
                } _: { port in
                    try await body(LiveServer(baseURL: URL(string: "http://127.0.0.1:\(port)")!, authority: authority, db: owner, settings: settings, signer: signer))
                }
            }
        }
    }
}
