import Foundation
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerWebhooks
import Logging
import PostgresNIO
import Testing

@testable import LedgerClient

/// Webhooks over real HTTP on loopback: a live ledger delivering to a receiver app.
@Suite("Webhooks")
struct WebhookTests {
    /// The receivers listen on loopback, a non-public address: these tests allow such addresses,
    /// at registration and at delivery (WebhookAddressTests refuses them).
    static let loopback = LedgerConfiguration.testing { $0.webhooksAllowPrivate = true }
    static var loopbackDeliveries: WebhookDeliverer.Settings {
        var settings = WebhookDeliverer.Settings()
        settings.allowPrivate = true
        return settings
    }

    static func start(_ client: LedgerClient, _ title: String) async throws -> (id: String, position: Int64) {
        let prepared = try await client.prepareCollaboration(
            localIdentifier: title, title: title, initiator: Initiator(handle: "\(title)@example.com"))
        return (prepared.identifier, prepared.position)
    }

    /// Every accepted delivery's signature checks with the secret, and its body is the event.
    static func expectSigned(_ deliveries: [WebhookReceiver.Delivery], secret: String) {
        for delivery in deliveries {
            #expect(throws: Never.self) { try WebhookSignature.verify(delivery.signature, body: delivery.body, secret: secret) }
            #expect(throws: WebhookSignature.Failure.mismatch) {
                try WebhookSignature.verify(delivery.signature, body: delivery.body, secret: secret + "x")
            }
        }
    }

    /// A receiver answering 500 twice then 200 gets every event once it recovers, in log order,
    /// each signed; a webhook for one collaboration gets only its events, one for the account every
    /// collaboration it owns, none of another owner's.
    @Test("a receiver failing twice then recovering gets every event once, in order, signed, only its own")
    func recovers() async throws {
        let receiver = WebhookReceiver()
        try await receiver.serving { url in
            try await LiveServer.run(configuration: Self.loopback, deliveries: Self.loopbackDeliveries) { server in
                let (devin, alice) = (server.client("devin"), server.client("alice"))
                let (trip, _) = try await Self.start(devin, "trip")
                let one = try await devin.registerWebhook(url: url.appendingPathComponent("one").absoluteString, collaborationID: trip)
                let every = try await devin.registerWebhook(url: url.appendingPathComponent("every").absoluteString)
                receiver.script("one", [500, 500])

                let person = SimulatedPerson(collaborationId: trip, devices: 1)
                _ = try await devin.updateParticipants(added: [person.rootHashData], in: trip)
                guard case .granted = try await verify(alice, person, in: trip) else {
                    Issue.record("not granted")
                    return
                }
                _ = try await devin.postHighlight(.change, trigger: "edit", in: trip)
                let (later, _) = try await Self.start(devin, "later")  // started after the registration
                _ = try await devin.postHighlight(.persistence, trigger: "renamed", in: later)
                let (other, _) = try await Self.start(alice, "alice-notes")  // another owner's
                let last = try await devin.postHighlight(.change, trigger: "comment", in: trip)

                try await waitUntil(timeout: .seconds(30), "both webhooks delivered the last event") {
                    receiver.accepted("one").last?.entry.position == last && receiver.accepted("every").last?.entry.position == last
                }
                let tripHistory = try await devin.history(of: trip).events.filter { $0.position > one.deliveredThrough }
                let laterHistory = try await devin.history(of: later).events
                #expect(tripHistory.map(\.type) == ["IdentityAdded", "AccessGranted", "HighlightPosted", "HighlightPosted"])
                let accepted = receiver.accepted("one")
                #expect(accepted.map(\.entry) == tripHistory)
                #expect(receiver.accepted("every").map(\.entry.position) == (tripHistory + laterHistory).map(\.position).sorted())
                #expect(!receiver.deliveries.contains { $0.entry.collaborationId == other })
                // The first event was tried three times under one delivery id, the last time accepted.
                let first = receiver.deliveries.filter { $0.path == "one" && $0.entry.position == tripHistory[0].position }
                #expect(first.map(\.status) == [500, 500, 200])
                #expect(Set(first.map(\.deliveryId)).count == 1)
                Self.expectSigned(accepted, secret: one.secret ?? "")
                Self.expectSigned(receiver.accepted("every"), secret: every.secret ?? "")
                // Each cursor moves once its worker has the receiver's answer, just after the receiver saw it.
                try await waitUntil(timeout: .seconds(20), "both cursors are past the last event") {
                    try await devin.webhooks().allSatisfy { $0.deliveredThrough >= last }
                }
                let listed = try await devin.webhooks()
                #expect(listed.map(\.status) == ["active", "active"] && listed.allSatisfy { $0.secret == nil && $0.lastError == nil })
            }
        }
    }

    /// A delivery worker killed mid-delivery loses nothing: after its lease lapses another delivers
    /// from the cursor in the database, the interrupted event again (at least once), nothing before
    /// it twice.
    @Test("a delivery worker killed mid-delivery loses nothing: another resumes from the cursor after the lease")
    func killedWorker() async throws {
        let receiver = WebhookReceiver()
        try await receiver.serving { url in
            // The API alone: the only delivery workers are the test's.
            try await LiveServer.run(.api, configuration: Self.loopback) { server in
                let devin = server.client("devin")
                let (trip, _) = try await Self.start(devin, "trip")
                let webhook = try await devin.registerWebhook(url: url.appendingPathComponent("hook").absoluteString, collaborationID: trip)
                var appended: [Int64] = []
                for trigger in ["edit", "comment", "edit", "comment", "edit"] {
                    appended.append(try await devin.postHighlight(.change, trigger: trigger, in: trip))
                }
                let positions = appended
                receiver.hang(at: positions[2])
                let logger = Logger(label: "deliver-test")
                let events = NotificationHub(client: server.db, channel: EventStore.channel, logger: logger)
                var settings = Self.loopbackDeliveries
                // A timeout of several seconds: under the whole suite's load a receiver's answer
                // took over one second, then over three, and an event before the hang was
                // delivered twice. The lease outlives a delivery.
                (settings.lease, settings.timeout) = (.seconds(16), .seconds(8))
                let worker: @Sendable (String) -> WebhookDeliverer = { [settings] id in
                    WebhookDeliverer(
                        client: server.db, store: EventStore(client: server.db, logger: logger), events: events, logger: logger,
                        id: id, settings: settings)
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    defer { group.cancelAll() }
                    group.addTask { try await events.run() }
                    let first = Task { try await worker("first").run() }
                    // Whatever ends this: the first worker stopped and the receiver's hung answer
                    // let go, or the receiver's shutdown would wait for it for ever.
                    defer {
                        first.cancel()
                        receiver.hang.release()
                    }
                    try await waitUntil(timeout: .seconds(60), "the first worker is mid-delivery of the third event") {
                        receiver.deliveries.contains { $0.entry.position == positions[2] }
                    }
                    first.cancel()  // killed: it neither records a failure nor gives the lease back
                    _ = await first.result
                    receiver.hang.release()
                    group.addTask { try await worker("second").run() }
                    try await waitUntil(timeout: .seconds(60), "the second worker delivered the last event (after the lease lapses)") {
                        receiver.accepted("hook").last?.entry.position == positions.last
                    }
                    // The cursor moves once the worker has the receiver's answer, just after the receiver saw it.
                    try await waitUntil(timeout: .seconds(20), "the cursor is past the last event") {
                        try await devin.webhooks().first?.deliveredThrough == positions.last
                    }
                }
                let arrivals = receiver.deliveries.map(\.entry.position)
                // Nothing before the interrupted event twice; it, again, first after the takeover;
                // then the rest in log order (a lane stalled past its lease may repeat some: at least once).
                #expect(arrivals.prefix(3) == [positions[0], positions[1], positions[2]], "\(arrivals)")
                #expect(arrivals.filter { $0 <= positions[1] }.count == 2, "\(arrivals)")
                let afterTakeover = Array(arrivals.dropFirst(3))
                #expect(afterTakeover.first == positions[2] && Set(afterTakeover) == Set(positions[2...]), "\(arrivals)")
                // The two arrivals of the third event carry one delivery id: a receiver drops the repeat.
                let third = receiver.deliveries.filter { $0.entry.position == positions[2] }
                #expect(third.count >= 2 && Set(third.map(\.deliveryId)).count == 1)
                #expect(Set(receiver.deliveries.map(\.deliveryId)).count == positions.count)
                Self.expectSigned(receiver.accepted("hook"), secret: webhook.secret ?? "")
            }
        }
    }

    /// Refused with 4xx, changing nothing: a non-owner's webhook, a URL that is not https (where
    /// http is not allowed), not a URL, with credentials, a malformed body, an unknown
    /// collaboration; another account's webhook cannot be listed or deleted.
    @Test("webhook refusals are 4xx and change nothing; another account's webhook cannot be listed or deleted")
    func refusals() async throws {
        var strict = LedgerConfiguration.testing()
        strict.webhooksAllowHTTP = false
        // No name here is looked up (no DNS traffic from tests): non-public addresses are
        // WebhookAddressTests' concern.
        strict.webhooksAllowPrivate = true
        try await LiveServer.run(configuration: strict) { server in
            let (devin, alice) = (server.client("devin"), server.client("alice"))
            let (trip, _) = try await Self.start(devin, "trip")
            let kept = try await devin.registerWebhook(url: "https://hooks.example.com/ledger", collaborationID: trip)
            #expect(kept.secret?.hasPrefix("whsec_") == true && kept.status == "active")
            let cases: [(String, Int, String, () async throws -> Void)] = [
                (
                    "non-owner", 403, "not_owner",
                    { _ = try await alice.registerWebhook(url: "https://alice.example.com", collaborationID: trip) }
                ),
                ("http", 400, "invalid_webhook_url", { _ = try await devin.registerWebhook(url: "http://hooks.example.com/ledger") }),
                ("relative", 400, "invalid_webhook_url", { _ = try await devin.registerWebhook(url: "/ledger") }),
                ("ftp", 400, "invalid_webhook_url", { _ = try await devin.registerWebhook(url: "ftp://hooks.example.com") }),
                ("credentials", 400, "invalid_webhook_url", { _ = try await devin.registerWebhook(url: "https://u:p@hooks.example.com") }),
                (
                    "unknown", 404, "not_found",
                    {
                        _ = try await devin.registerWebhook(
                            url: "https://hooks.example.com", collaborationID: UUID().uuidString.lowercased())
                    }
                ),
                (
                    "malformed", 400, "missing_field",
                    { _ = try await devin.exchange("POST", "/v1/webhooks", body: ["uri": "https://x.example"]) }
                ),
                ("other's delete", 404, "not_found", { try await alice.deleteWebhook(kept.id) }),
                ("unknown delete", 404, "not_found", { try await devin.deleteWebhook(UUID().uuidString) }),
            ]
            for (name, status, code, attempt) in cases {
                let error = await rejection(attempt)
                #expect(error?.status == status && error?.code == code, "\(name): \(String(describing: error))")
            }
            #expect(try await alice.webhooks().isEmpty)
            #expect(try await devin.webhooks().map(\.id) == [kept.id])
            try await devin.deleteWebhook(kept.id)
            #expect(try await devin.webhooks().isEmpty)
        }
    }

    @Test("after a day of failures a webhook is disabled, its last error shown")
    func disabled() async throws {
        let receiver = WebhookReceiver()
        receiver.script("down", Array(repeating: 503, count: 100))
        try await receiver.serving { url in
            try await LiveServer.run(configuration: Self.loopback, deliveries: Self.loopbackDeliveries) { server in
                let devin = server.client("devin")
                let (trip, _) = try await Self.start(devin, "trip")
                let webhook = try await devin.registerWebhook(url: url.appendingPathComponent("down").absoluteString, collaborationID: trip)
                _ = try await devin.postHighlight(.change, trigger: "edit", in: trip)
                try await waitUntil(timeout: .seconds(20), "the webhook is failing") {
                    try await devin.webhooks().first?.status == "failing"
                }
                // A day passes: the failure run began 25 hours ago, and the retry is due.
                try await server.db.query(
                    """
                    UPDATE ledger_webhooks SET failing_since = now() - interval '25 hours', next_attempt_at = now()
                    WHERE id = \(UUID(uuidString: webhook.id)!)
                    """)
                try await waitUntil(timeout: .seconds(20), "the webhook is disabled") {
                    try await devin.webhooks().first?.status == "disabled"
                }
                let listed = try #require(try await devin.webhooks().first)
                #expect(listed.lastError == "HTTP 503" && listed.disabledAt != nil && listed.deliveredThrough == webhook.deliveredThrough)
            }
        }
    }

    @Test("a refused connection and a receiver that does not answer in time are failures, retried with backoff")
    func unreachable() async throws {
        let receiver = WebhookReceiver()
        try await receiver.serving { url in
            try await LiveServer.run(.api, configuration: Self.loopback) { server in
                let devin = server.client("devin")
                let (trip, _) = try await Self.start(devin, "trip")
                // Port 1 on loopback: nothing listens, the connection is refused.
                let refused = try await devin.registerWebhook(url: "http://127.0.0.1:1/hook", collaborationID: trip)
                let silent = try await devin.registerWebhook(
                    url: url.appendingPathComponent("silent").absoluteString, collaborationID: trip)
                let position = try await devin.postHighlight(.change, trigger: "edit", in: trip)
                receiver.hang(at: position)
                let logger = Logger(label: "deliver-test")
                let events = NotificationHub(client: server.db, channel: EventStore.channel, logger: logger)
                var settings = Self.loopbackDeliveries
                // Room for a refusal to arrive on a machine running every suite; the silent one
                // still never answers.
                settings.timeout = .seconds(2)
                let deliverer = WebhookDeliverer(
                    client: server.db, store: EventStore(client: server.db, logger: logger), events: events, logger: logger,
                    settings: settings)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    defer { group.cancelAll() }
                    group.addTask { try await events.run() }
                    group.addTask { try await deliverer.run() }
                    try await waitUntil(timeout: .seconds(60), "both webhooks failing") {
                        let listed = try await devin.webhooks()
                        return listed.allSatisfy { $0.status == "failing" && $0.lastError != nil && $0.nextAttemptAt != nil }
                    }
                }
                receiver.hang.release()
                let listed = try await devin.webhooks()
                let reasons = Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0.lastError ?? "") })
                #expect(reasons[silent.id] == "no answer within 2.0 seconds")
                #expect(reasons[refused.id]?.contains("refused") == true)
                #expect(listed.allSatisfy { $0.deliveredThrough < position }, "nothing counts as delivered")
            }
        }
    }

    /// The signature: an independent HMAC (Python's hmac) gives the same header; a changed body,
    /// another secret, an old or future time and malformed headers are refused.
    @Test("the signature matches Python's hmac; a changed body, other secret, stale time, bad headers refused")
    func signature() throws {
        let body = Data(#"{"position":7}"#.utf8)
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        let header = WebhookSignature.header(secret: "whsec_test", body: body, time: time)
        #expect(header == "t=1700000000,v1=4c7cd6e2414a07249efee2189ada6acbd93c90bc50cb0d0544470abc0638d7bd")
        try WebhookSignature.verify(header, body: body, secret: "whsec_test", now: time.addingTimeInterval(299))
        // A second scheme or a second v1 (a rotated secret) beside the right one still checks.
        try WebhookSignature.verify(
            "v0=abc," + header + ",v1=" + String(repeating: "0", count: 64), body: body, secret: "whsec_test", now: time)
        let refusals: [(String, Data, String, Date, WebhookSignature.Failure)] = [
            (header, Data(#"{"position":8}"#.utf8), "whsec_test", time, .mismatch),
            (header, body, "whsec_other", time, .mismatch),
            (header, body, "whsec_test", time.addingTimeInterval(301), .outsideTolerance(seconds: 301)),
            (header, body, "whsec_test", time.addingTimeInterval(-301), .outsideTolerance(seconds: -301)),
            ("t=1700000000", body, "whsec_test", time, .malformed),
            ("v1=4c7cd6e2414a07249efee2189ada6acbd93c90bc50cb0d0544470abc0638d7bd", body, "whsec_test", time, .malformed),
            ("t=soon,v1=4c7cd6e2414a07249efee2189ada6acbd93c90bc50cb0d0544470abc0638d7bd", body, "whsec_test", time, .malformed),
            ("t=1700000000,v1=4c7c", body, "whsec_test", time, .malformed),
            ("t=1700000000,v1=+c7cd6e2414a07249efee2189ada6acbd93c90bc50cb0d0544470abc0638d7bd", body, "whsec_test", time, .malformed),
            ("t=1,t=1700000000,v1=4c7cd6e2414a07249efee2189ada6acbd93c90bc50cb0d0544470abc0638d7bd", body, "whsec_test", time, .malformed),
            ("", body, "whsec_test", time, .malformed),
        ]
        for (header, body, secret, now, failure) in refusals {
            #expect(throws: failure, "\(header)") { try WebhookSignature.verify(header, body: body, secret: secret, now: now) }
        }
    }
}
