import Foundation
import LedgerConfiguration
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import Testing

@testable import LedgerFeed

/// The tail's routing, without a connection: events offered in log order to the subscribers
/// they name, and a subscriber that does not read cut off instead of buffered.
@Suite("Feed tail")
struct FeedTailTests {
    static func item(_ position: Int64, _ collaborationId: String, _ event: CollaborationEvent) -> FeedItem {
        let new = event.newEvent(metadata: EventMetadata(actor: "devin"))
        return FeedItem(
            RecordedEvent(
                position: position, streamId: Streams.collaboration(collaborationId), version: position, eventId: new.eventId,
                type: new.type, data: new.data, metadata: new.metadata, recordedAtMicros: 0, hash: []),
            disclosure: Disclosure(), holds: { _ in true })
    }

    static func notice(_ account: String) -> CollaborationEvent {
        .highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: account))
    }

    @Test("an event reaches only the subscribers it names; a grant routes later events to its account")
    func routing() async throws {
        try await withTestStore { store, client, _ in
            let tail = FeedTail(
                store: store, events: NotificationHub(client: client, channel: EventStore.channel, logger: Logger(label: "test")),
                logger: Logger(label: "test"))
            // The first subscriber wakes the sleeping tail at its own position.
            let owner = try #require(tail.subscribe(FeedAudience(account: "devin", owned: ["c1"]), at: 10))
            let alice = try #require(tail.subscribe(FeedAudience(account: "alice"), at: 10))
            let hash = try RootHash(bytes: [UInt8](repeating: 7, count: 32))
            tail.publish([Self.item(11, "c1", Self.notice("devin")), Self.item(12, "c2", Self.notice("erin"))], head: 12, generation: 1)
            #expect(owner.drain().text.contains("id: 11\n") && alice.drain().text.isEmpty)
            tail.publish(
                [
                    Self.item(
                        13, "c1",
                        .accessGranted(
                            .init(
                                rootHash: hash, account: "alice", proofRequestId: "r", challengeId: "c",
                                proof: IdentityProof(publicKey: [4], publicKeyIndex: 0, inclusionHashes: [[1]]), challenge: [1],
                                signature: [2]))),
                    Self.item(14, "c1", Self.notice("devin")),
                ], head: 14, generation: 1)
            let seen = alice.drain().text
            #expect(seen.contains("id: 13\n") && seen.contains("id: 14\n"))
            // A client older than what the tail holds reads the log first.
            #expect(tail.subscribe(FeedAudience(account: "bob"), at: 0) == nil)
            // The last subscriber to leave puts the tail to sleep: what it reads then is dropped,
            // and the next subscriber wakes it at any position.
            tail.unsubscribe(owner)
            tail.unsubscribe(alice)
            tail.publish([Self.item(15, "c1", Self.notice("devin"))], head: 15, generation: 1)
            let late = try #require(tail.subscribe(FeedAudience(account: "devin", owned: ["c1"]), at: 3))
            #expect(late.drain().text.isEmpty)
        }
    }

    @Test("a subscriber whose queue outgrows the limit is cut off: its queue dropped, nothing more queued")
    func slowSubscriber() async throws {
        try await withTestStore { store, client, _ in
            let tail = FeedTail(
                store: store, events: NotificationHub(client: client, channel: EventStore.channel, logger: Logger(label: "test")),
                logger: Logger(label: "test"), queueLimit: 2_000)
            let slow = try #require(tail.subscribe(FeedAudience(account: "devin", owned: ["c1"]), at: 0))
            tail.publish((1...50).map { Self.item($0, "c1", Self.notice("devin")) }, head: 50, generation: 1)
            let drained = slow.drain()
            #expect(drained.overflowed)
            #expect(drained.text.isEmpty)
        }
    }

    @Test("one keep-alive tick for every subscriber: each is woken and then owes its client a comment")
    func keepAlive() async throws {
        try await withTestStore { store, client, _ in
            let tail = FeedTail(
                store: store, events: NotificationHub(client: client, channel: EventStore.channel, logger: Logger(label: "test")),
                logger: Logger(label: "test"), keepAlive: .milliseconds(50))
            let subscribers = try (0..<3).map { try #require(tail.subscribe(FeedAudience(account: "a\($0)"), at: 0)) }
            #expect(subscribers.allSatisfy { !$0.drain().keepAlive })
            let ticking = Task { await tail.tick() }
            defer { ticking.cancel() }
            for subscriber in subscribers {
                #expect(await subscriber.signal.wait(timeout: .seconds(10)), "woken by the tick")
                try await waitUntil("the keep-alive is due") { subscriber.drain().keepAlive }
            }
        }
    }
}
