import AsyncHTTPClient
import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import NIOCore
import PostgresNIO
import Testing

@testable import LedgerWebhooks

/// No request forgery into the operator's network (SPEC "Change feed and webhooks"): with
/// `LEDGER_WEBHOOKS_ALLOW_PRIVATE` off, a webhook whose host is or resolves to a non-public
/// address is refused at registration and at delivery, and a batch's connections go to the
/// address checked. Everything stays on loopback: the names used resolve from the hosts file.
@Suite("Webhook addresses")
struct WebhookAddressTests {
    /// With LEDGER_WEBHOOKS_ALLOW_PRIVATE off, registration refuses with 400 invalid_webhook_url,
    /// naming why, a host that is or resolves to a non-public address: every class, localhost and
    /// [::1]; nothing is registered.
    @Test("private webhook hosts refused at registration: 400 invalid_webhook_url naming why; none registered")
    func registrationRefused() async throws {
        try await LiveServer.run(configuration: LedgerConfiguration.testing { $0.webhooksAllowPrivate = false }) { server in
            let devin = server.client("devin")
            let cases: [(String, String)] = [
                ("http://127.0.0.1:8080/hook", "url's host 127.0.0.1 is loopback (127.0.0.0/8)"),
                ("http://10.0.0.7/hook", "private (10.0.0.0/8)"),
                ("http://172.16.5.4/hook", "private (172.16.0.0/12)"),
                ("https://192.168.1.20/hook", "private (192.168.0.0/16)"),
                ("http://169.254.169.254/latest/meta-data", "link-local (169.254.0.0/16)"),
                ("http://100.64.0.1/hook", "shared address space (carrier-grade NAT) (100.64.0.0/10)"),
                ("http://0.0.0.0:8080/hook", "unspecified (0.0.0.0/32)"),
                ("http://255.255.255.255/hook", "broadcast"),
                ("http://224.0.0.1/hook", "multicast"),
                ("https://192.0.2.1/hook", "documentation (192.0.2.0/24)"),
                ("https://198.18.0.1/hook", "benchmarking (198.18.0.0/15)"),
                ("http://[::1]:8080/hook", "url's host ::1 is loopback (::1/128)"),
                ("http://[::]/hook", "unspecified (::/128)"),
                ("http://[fe80::1]/hook", "link-local (fe80::/10)"),
                ("https://[fc00::1]/hook", "private (fc00::/7)"),
                ("http://[::ffff:127.0.0.1]/hook", "loopback (127.0.0.0/8 as IPv4-mapped ::ffff:0:0/96)"),
                ("http://localhost:8080/hook", "url's host localhost resolves to "),
            ]
            for (url, reason) in cases {
                let error = await rejection { _ = try await devin.registerWebhook(url: url) }
                #expect(
                    error?.status == 400 && error?.code == "invalid_webhook_url" && error?.message.contains(reason) == true,
                    "\(url): \(String(describing: error))")
            }
            let registered = try await devin.webhooks()
            #expect(registered.isEmpty)
        }
    }

    /// A delivery worker with LEDGER_WEBHOOKS_ALLOW_PRIVATE off, for webhooks registered where the
    /// API allowed loopback (an IP literal and localhost): each delivery fails with the reason as
    /// its last error, the cursor stays, the receiver gets nothing.
    @Test("private webhook hosts refused at delivery: the reason as last error, cursor kept, nothing received")
    func deliveryRefused() async throws {
        let receiver = WebhookReceiver()
        try await receiver.serving { url in
            // The API alone, allowing loopback: the only delivery worker is the test's, which does not.
            try await LiveServer.run(.api, configuration: WebhookTests.loopback) { server in
                let devin = server.client("devin")
                let (trip, _) = try await WebhookTests.start(devin, "trip")
                let port = try #require(url.port)
                let literal = try await devin.registerWebhook(
                    url: url.appendingPathComponent("literal").absoluteString, collaborationID: trip)
                let named = try await devin.registerWebhook(url: "http://localhost:\(port)/named", collaborationID: trip)
                let position = try await devin.postHighlight(.change, trigger: "edit", in: trip)
                let logger = Logger(label: "deliver-test")
                let events = NotificationHub(client: server.db, channel: EventStore.channel, logger: logger)
                var settings = WebhookDeliverer.Settings()
                settings.allowPrivate = false
                let deliverer = WebhookDeliverer(
                    client: server.db, store: EventStore(client: server.db, logger: logger), events: events, logger: logger,
                    settings: settings)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    defer { group.cancelAll() }
                    group.addTask { try await events.run() }
                    group.addTask { try await deliverer.run() }
                    try await waitUntil(timeout: .seconds(20), "both webhooks failing") {
                        let listed = try await devin.webhooks()
                        return listed.count == 2 && listed.allSatisfy { $0.status == "failing" && $0.lastError != nil }
                    }
                }
                let webhooks = try await devin.webhooks()
                let listed = Dictionary(uniqueKeysWithValues: webhooks.map { ($0.id, $0) })
                let literalError = listed[literal.id]?.lastError ?? ""
                #expect(literalError.contains("url's host 127.0.0.1 is loopback (127.0.0.0/8)"), "\(literalError)")
                let namedError = listed[named.id]?.lastError ?? ""
                #expect(namedError.contains("url's host localhost resolves to ") && namedError.contains("loopback ("), "\(namedError)")
                for registered in [literal, named] {
                    let cursor = listed[registered.id]?.deliveredThrough
                    #expect(cursor == registered.deliveredThrough && cursor.map { $0 < position } == true, "the cursor did not move")
                }
                #expect(receiver.deliveries.isEmpty, "nothing was sent")
            }
        }
    }

    /// A batch's connections go to the address checked, not to what the name resolves to: localhost
    /// pinned to 127.0.0.1 reaches the receiver, pinned to 127.0.0.2 (where nothing listens) does
    /// not.
    @Test("a batch connects to the address checked, not what the name resolves to (localhost pinned)")
    func pinned() async throws {
        let receiver = WebhookReceiver()
        try await receiver.serving { url in
            let port = try #require(url.port)
            var reached: [String: Bool] = [:]
            for address in ["127.0.0.1", "127.0.0.2"] {
                let destination = WebhookDestination(host: "localhost", address: address)
                let http = HTTPClient(
                    eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: destination.clientConfiguration,
                    backgroundActivityLogger: Logger(label: "pinned-test"))
                do {
                    // Any answer (the receiver takes POSTs only) shows the connection was made.
                    let response = try await http.execute(HTTPClientRequest(url: "http://localhost:\(port)/pinned"), timeout: .seconds(5))
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    reached[address] = true
                } catch {
                    reached[address] = false
                }
                try await http.shutdown()
            }
            #expect(reached == ["127.0.0.1": true, "127.0.0.2": false])
        }
    }
}
