import AsyncHTTPClient
import Foundation
import HTTPTypes
import LedgerApp
import LedgerClient
import LedgerConfiguration
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import LedgerWebhooks
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import TransparencyLog

/// The services `ledger serve` (or `ledger api`) runs, on a fresh database and a free port,
/// and SDK clients signed in as any account, or plain requests (`LedgerCalls`).
public struct LiveServer: LedgerCalls {
    public let baseURL: URL
    public let authority: TokenAuthority
    /// The tokens' HS256 secret (`LEDGER_JWT_SECRET`), for a `ledger` command run against it.
    public let secret: String
    public let db: PostgresClient
    /// The database, as its owner reaches it (for pg_dump and the like).
    public let settings: DatabaseSettings
    /// The checkpointer's key.
    public let signer: NoteSigner

    public func client(_ account: String, roles: [String] = []) -> LedgerClient {
        let authority = authority
        return LedgerClient(baseURL: baseURL, transport: HTTPClientTransport()) {
            try await authority.issue(account: account, roles: roles)
        }
    }

    /// The process the test runs: `ledger serve` (everything), or `ledger api` (the HTTP API
    /// alone: proofs wait for a verifier the test runs itself).
    public enum Roles: Sendable { case serve, api }

    /// `authority`: the tokens the server takes; nil: HS256 with a fresh `secret` (an identity
    /// provider's, `OIDCProvider`, for the console's sign-in through it).
    public static func run(
        _ roles: Roles = .serve, configuration: LedgerConfiguration = .testing(), authority given: TokenAuthority? = nil,
        deliveries: WebhookDeliverer.Settings = .init(), engine: RoleServices.Engine = .init(),
        signer: NoteSigner = try! NoteSigner(name: "live.test/ledger"), witnesses: WitnessPolicy? = nil, publishedFile: URL? = nil,
        _ body: @Sendable (LiveServer) async throws -> Void
    ) async throws {
        LedgerMetrics.bootstrap()  // as `ledger serve` does: /metrics shows what the services record
        try await withTestStore { _, owner, settings in
            let logger = Logger(label: "live-server")
            let secret = "live-server-test-secret-\(UUID())"
            let authority = if let given { given } else { try await TokenAuthority(secret: secret) }
            // As in production: the server connects as a member of ledger_service, not as the owner.
            let service = try await PostgresAdmin.serviceLogin("ledger_app_\(UInt32.random(in: 0 ... .max))", on: settings, logger: logger)
            // The published checkpoint belongs to this database's log alone: a file of its own.
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-server-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: folder) }
            var configuration = configuration
            configuration.checkpointFile = (publishedFile ?? folder.appendingPathComponent("published-checkpoint")).path
            var process = LedgerProcess(
                roles == .serve ? .serve : .api, configuration: configuration, database: service, authority: authority,
                signer: roles == .serve ? signer : nil, witnesses: witnesses)
            process.deliveries = deliveries
            process.engine = engine
            // A test's load is a few clients: a pool of 20 (its workers hold some), not
            // production's 40, so the suites running side by side stay inside the test cluster's
            // connections.
            process.maxConnections = 20
            try await process.serving(logger: logger) { running in
                try await body(
                    LiveServer(
                        baseURL: running.baseURL, authority: authority, secret: secret, db: owner, settings: settings, signer: signer))
            }
        }
    }
}

extension LiveServer {
    /// A request over loopback to the server's port.
    public func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestAnswer {
        var request = HTTPClientRequest(url: baseURL.absoluteString + uri)
        request.method = HTTPMethod(rawValue: method.rawValue)
        for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
        if let body { request.body = .bytes(body) }
        let (response, answer) = try await TestHTTP.exchange(request)
        var fields = HTTPFields()
        for (name, value) in response.headers { if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) } }
        return TestAnswer(status: HTTPResponse.Status(code: Int(response.status.code)), headers: fields, body: answer)
    }
}

extension LiveServer {
    /// Waits until a session on the server's database LISTENs on `channel` (its last statement a
    /// LISTEN naming it): a hub of the server's, up.
    public func waitListening(_ channel: String, timeout: Duration = .seconds(60)) async throws {
        try await waitUntil(timeout: timeout, "LISTEN \(channel) up") {
            let rows = try await db.query(
                """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND strpos(query, \(channel)) > 0
                """)
            for try await count in rows.decode(Int64.self) { return count > 0 }
            return false
        }
    }
}
