import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import LedgerTokens
import LedgerVerifier
import Logging
import NIOCore
import PostgresNIO

/// A router's test client (`app.test(.router)`), for a test that needs a router alone: several
/// instances over one database, say. Tests of the ledger as it runs use `LiveServer`.
public struct RouterAPI: LedgerCalls {
    public let client: any TestClientProtocol
    public let authority: TokenAuthority
    public let db: PostgresClient

    public init(client: any TestClientProtocol, authority: TokenAuthority, db: PostgresClient) {
        (self.client, self.authority, self.db) = (client, authority, db)
    }

    public func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestAnswer {
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: body)
        return TestAnswer(status: response.status, headers: response.headers, body: response.body)
    }
}

extension ProofService {
    /// As in `ledger serve`: an engine in this process.
    public static func inProcess(
        _ client: PostgresClient, _ store: EventStore, configuration: LedgerConfiguration = .testing(),
        settings: ProofEngine.Settings? = nil
    ) -> ProofService {
        let logger = Logger(label: "api-test")
        return ProofService(
            requests: ProofRequests(client: client, logger: logger, challengeLifetime: configuration.challengeLifetime.seconds),
            store: store,
            engine: ProofEngine(client: client, logger: logger, settings: settings ?? .init(maxGroup: configuration.verifierGroup)),
            verdicts: nil, verdictWait: configuration.verdictWait)
    }
}
