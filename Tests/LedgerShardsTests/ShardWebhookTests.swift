import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTestSupport
import LedgerWebhooks
import LedgerWire
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Webhooks on two shards (issue 49): each shard delivers its own events; a webhook of every
/// collaboration is one id and one secret on every shard, one of a collaboration is its shard's.
@Suite("Webhooks on shards")
struct ShardWebhookTests {
    /// A webhook of every collaboration gets both shards' events, each signed with its one secret;
    /// one of a collaboration only its; listed by shard; deleted on every shard; refusals; refused
    /// by one shard, undone on the other.
    @Test("webhooks on shards: both shards' events signed once, listed by shard, deleted everywhere, refusals")
    func delivered() async throws {
        let deliveries = {
            var settings = WebhookDeliverer.Settings()
            settings.allowPrivate = true
            return settings
        }()
        let receiver = WebhookReceiver()
        try await receiver.serving { url in
            let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
            try await LiveShards.run(
                shards: shards, configuration: .testing { $0.webhooksAllowPrivate = true }, deliveries: deliveries
            ) { live in
                let devin = live.client("devin")
                let every = try await devin.registerWebhook(url: url.appendingPathComponent("every").absoluteString)
                let secret = try #require(every.secret)
                #expect(every.shard == 0 && every.collaborationId == nil)
                var started: [(id: String, shard: Int)] = []
                while Set(started.map(\.shard)).count < 2 {
                    let id = try await devin.prepareCollaboration(
                        localIdentifier: "hook \(started.count)", title: "Hook", initiator: Initiator(handle: "devin@example.com")
                    ).identifier
                    started.append((id, live.shard(of: id)))
                }
                let collaborations = started
                let onShard1 = try #require(started.first { $0.shard == 1 }).id
                let one = try await devin.registerWebhook(url: url.appendingPathComponent("one").absoluteString, collaborationID: onShard1)
                #expect(one.shard == nil, "a collaboration's webhook is its shard's answer, as on one database")
                for (id, _) in started {
                    _ = try await devin.updateParticipants(added: [SimulatedPerson(collaborationId: id, devices: 1).rootHashData], in: id)
                }

                // Both shards deliver to the webhook of every collaboration: each one's start and add, signed with one secret.
                try await waitUntil(timeout: .seconds(60), "every event delivered") {
                    Set(receiver.accepted("every").map(\.entry.collaborationId)).count == collaborations.count
                        && receiver.accepted("every").count >= 2 * collaborations.count && receiver.accepted("one").count >= 1
                }
                let everything = receiver.accepted("every")
                #expect(everything.count == 2 * started.count, "a start and an add of each, none twice")
                for (id, _) in started {
                    #expect(
                        everything.filter { $0.entry.collaborationId == id }.map(\.entry.type) == [
                            "CollaborationStarted", "IdentityAdded",
                        ])
                }
                for delivery in everything + receiver.accepted("one") {
                    let key = delivery.path == "one" ? one.secret ?? "" : secret
                    #expect(throws: Never.self) { try WebhookSignature.verify(delivery.signature, body: delivery.body, secret: key) }
                }
                #expect(receiver.accepted("one").map(\.entry.collaborationId) == [onShard1])
                // Each delivered entry names its shard, and no two of the shards' events share a delivery id
                // (each shard's positions are its own, the webhook's id is one on both).
                #expect(everything.allSatisfy { $0.entry.shard == live.shard(of: $0.entry.collaborationId) })
                #expect(Set(everything.map(\.deliveryId)).count == everything.count, "one Ledger-Delivery id an event")
                #expect(Set(everything.map(\.entry.position)).count < everything.count, "the shards' positions overlap, so the check bites")

                // Listed by shard: the webhook of every collaboration on both, the other on its shard alone.
                let listed = try await devin.webhooks()
                #expect(listed.filter { $0.id == every.id }.map(\.shard) == [0, 1])
                #expect(listed.filter { $0.id == one.id }.map(\.shard) == [1])
                #expect(try await live.client("stranger").webhooks().isEmpty)

                // Refused: another's collaboration (on its shard), a body that is not JSON.
                let stranger = await rejection {
                    _ = try await live.client("stranger").registerWebhook(url: url.absoluteString, collaborationID: onShard1)
                }
                #expect(stranger?.status == 403)
                let (_, bad) = try await TestHTTP.data(for: try await live.request("POST", "v1/webhooks", as: "devin", body: "{"))
                #expect(bad.statusCode == 400)

                // Deleted on every shard; again, or another's, 404.
                try await devin.deleteWebhook(every.id)
                #expect(try await devin.webhooks().map(\.id) == [one.id])
                let again = await rejection { try await devin.deleteWebhook(every.id) }
                #expect(again?.status == 404)
                let others = await rejection { try await live.client("stranger").deleteWebhook(one.id) }
                #expect(others?.status == 404)
                #expect(try await devin.webhooks().map(\.id) == [one.id])

                // Shard 1 full (50 webhooks a shard): a webhook of every collaboration is refused by
                // it, and shard 0, which had registered it first, deletes it again.
                for _ in 1..<WebhookRegistry.limitPerAccount {
                    _ = try await devin.registerWebhook(url: url.appendingPathComponent("one").absoluteString, collaborationID: onShard1)
                }
                let full = await rejection { _ = try await devin.registerWebhook(url: url.appendingPathComponent("every").absoluteString) }
                #expect(full?.code == "too_many_webhooks")
                let kept = try await devin.webhooks()
                #expect(kept.count == WebhookRegistry.limitPerAccount && kept.allSatisfy { $0.shard == 1 }, "nothing left on shard 0")
            }
        }
    }
}
