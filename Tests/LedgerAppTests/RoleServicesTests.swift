import Foundation
import Hummingbird
import LedgerAPI
import LedgerApp
import LedgerConfiguration
import LedgerFeed
import LedgerLog
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerTokens
import LedgerVerifier
import LedgerWebhooks
import Logging
import ServiceLifecycle
import Testing
import TransparencyLog

/// The composition root's contract with a ServiceGroup, which stops services in reverse order:
/// `Readiness` last (so `/ready` turns 503 first), the HTTP server before it (it stops taking
/// requests before the workers and listeners it uses stop), and each role with the workers it
/// names, no more. Nothing here connects: the client is made, never run.
struct RoleServicesTests {
    static let logger = Logger(label: "test")
    static let client = DatabaseSettings(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: "none")
        .makeClient(logger: logger)
    static let signer = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
    static let store = EventStore(client: client, logger: logger)
    static let configuration = LedgerConfiguration()

    static func names(_ services: [any Service]) -> [String] {
        services.map { String(describing: type(of: $0)).components(separatedBy: "<")[0] }
    }

    @Test("ledger serve: every worker, the checkpointer with a signing key, the HTTP server, Readiness last")
    func serve() async throws {
        let (store, configuration) = (Self.store, Self.configuration)
        let authority = try await TokenAuthority(secret: TokenAuthority.randomSecret())
        let unsigned = Self.names(
            RoleServices.serve(
                shards: [.init(client: Self.client, store: store)], cluster: nil, authority: authority, configuration: configuration,
                logs: nil, logger: Self.logger))
        #expect(unsigned.suffix(2) == ["Application", "Readiness"])
        for worker in ["VerifierWorker", "ProjectorWorker", "ExpiryService", "FeedTail", "WebhookDeliverer"] {
            #expect(unsigned.contains(worker), "\(worker) missing from \(unsigned)")
        }
        #expect(!unsigned.contains("Checkpointer"), "no signing key, no checkpointer")
        let signed = Self.names(
            RoleServices.serve(
                shards: [.init(client: Self.client, store: store)], cluster: nil, authority: authority, configuration: configuration,
                logs: .init(single: try NoteSigner(Self.signer)), logger: Self.logger))
        #expect(signed.suffix(3) == ["Checkpointer", "Application", "Readiness"])
    }

    @Test("ledger api: the HTTP server and the feed's tail, no worker; other roles: workers, no HTTP server")
    func roles() async throws {
        let (store, configuration) = (Self.store, Self.configuration)
        let authority = try await TokenAuthority(secret: TokenAuthority.randomSecret())
        let api = Self.names(
            RoleServices.apiOnly(
                client: Self.client, store: store, authority: authority, configuration: configuration, logger: Self.logger))
        #expect(api.suffix(2) == ["Application", "Readiness"])
        #expect(api.contains("FeedTail"))
        for worker in ["VerifierWorker", "ProjectorWorker", "ExpiryService", "WebhookDeliverer", "Checkpointer"] {
            #expect(!api.contains(worker), "ledger api runs \(worker)")
        }
        let roles: [(String, [String])] = [
            ("VerifierWorker", Self.names(RoleServices.verifier(client: Self.client, configuration: configuration, logger: Self.logger))),
            (
                "ProjectorWorker",
                Self.names(RoleServices.projector(client: Self.client, store: store, configuration: configuration, logger: Self.logger))
            ),
            (
                "WebhookDeliverer",
                Self.names(RoleServices.deliverer(client: Self.client, store: store, configuration: configuration, logger: Self.logger))
            ),
            (
                "Checkpointer",
                Self.names(
                    RoleServices.checkpointer(
                        client: Self.client, signer: try NoteSigner(Self.signer), witnesses: nil, publishedFile: nil, logger: Self.logger))
            ),
        ]
        for (worker, services) in roles {
            #expect(services.contains(worker), "\(worker)'s role: \(services)")
            #expect(!services.contains("Application") && !services.contains("Readiness"))
        }
        #expect(roles[1].1.contains("ExpiryService"), "ledger project runs the expiry service")
    }
}
