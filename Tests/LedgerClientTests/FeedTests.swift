import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerTestSupport
import Synchronization
import Testing

/// The change feed over real HTTP on loopback, through the SDK's `feed(after:)`.
@Suite("Change feed")
struct FeedTests {
    /// What one account's feed delivered so far.
    final class Received: Sendable {
        private let events = Mutex<[FeedEvent]>([])
        var all: [FeedEvent] { events.withLock { $0 } }
        func append(_ event: FeedEvent) { events.withLock { $0.append(event) } }
        func has(_ position: Int64) -> Bool { all.contains { $0.id == position } }
    }

    /// Consumes `client`'s feed after `after` into a `Received` until the test ends.
    static func listen(_ client: LedgerClient, after: Int64, in group: inout ThrowingTaskGroup<Void, any Error>) -> Received {
        let received = Received()
        group.addTask {
            for try await event in client.feed(after: after) { received.append(event) }
        }
        return received
    }

    static func start(_ client: LedgerClient, _ title: String) async throws -> (id: String, position: Int64) {
        let prepared = try await client.prepareCollaboration(
            localIdentifier: title, title: title, initiator: Initiator(handle: "\(title)@example.com"))
        return (prepared.identifier, prepared.position)
    }

    /// Who sees what: the owner its membership changes and notices, a member its own grant and
    /// revocation and the notices for it, a mention only the mentioned, nothing after a revocation,
    /// nothing for a non-member; reconnecting with Last-Event-ID gives exactly the events after it.
    @Test("who sees what on the feed, by role; Last-Event-ID resumes with exactly the events after it")
    func visibility() async throws {
        try await LiveServer.run { server in
            let (devin, alice, bob, erin) = (server.client("devin"), server.client("alice"), server.client("bob"), server.client("erin"))
            let (id, started) = try await Self.start(devin, "trip")
            // Sentinels: notices in collaborations of their own, posted last, that alice and erin see.
            let (aliceOwn, aliceStarted) = try await Self.start(alice, "alice-notes")
            let (erinOwn, erinStarted) = try await Self.start(erin, "erin-notes")
            let alicePerson = SimulatedPerson(collaborationId: id, devices: 1)
            let bobPerson = SimulatedPerson(collaborationId: id, devices: 1)
            _ = try await devin.updateParticipants(added: [alicePerson.rootHashData, bobPerson.rootHashData], in: id)

            try await withThrowingTaskGroup(of: Void.self) { group in
                defer { group.cancelAll() }
                let seen = [
                    "devin": Self.listen(devin, after: started, in: &group), "alice": Self.listen(alice, after: started, in: &group),
                    "bob": Self.listen(bob, after: started, in: &group), "erin": Self.listen(erin, after: started, in: &group),
                ]
                guard case .granted(_, _, let aliceGranted) = try await verify(alice, alicePerson, in: id),
                    case .granted(_, _, let bobGranted) = try await verify(bob, bobPerson, in: id)
                else {
                    Issue.record("not granted")
                    return
                }
                try await waitUntil(timeout: .seconds(10), "alice's feed has her grant") { seen["alice"]!.has(aliceGranted) }

                let change = try await devin.postHighlight(.change, trigger: "edit", in: id)
                let mention = try await devin.postHighlight(.mention, mentioning: alicePerson.rootHashData, in: id)
                let removed = try await devin.updateParticipants(removed: [alicePerson.rootHashData], in: id)
                let after = try await devin.postHighlight(.persistence, trigger: "renamed", in: id)
                let aliceLast = try await alice.postHighlight(.change, trigger: "edit", in: aliceOwn)
                let erinLast = try await erin.postHighlight(.change, trigger: "edit", in: erinOwn)
                try await waitUntil(timeout: .seconds(10), "every feed reached its last event") {
                    seen["devin"]!.has(after) && seen["bob"]!.has(after) && seen["alice"]!.has(aliceLast) && seen["erin"]!.has(erinLast)
                }
                func types(_ account: String) -> [String] { seen[account]!.all.map { "\($0.id) \($0.type)" } }

                // The owner: the identities' changes, both grants, the notices but the mention, the removal.
                let devinSaw = seen["devin"]!.all.filter { $0.id > started }
                #expect(devinSaw.contains { $0.id == aliceGranted } && devinSaw.contains { $0.id == bobGranted })
                #expect(devinSaw.contains { $0.id == change } && devinSaw.contains { $0.id == after })
                #expect(!devinSaw.contains { $0.id == mention }, "a mention reaches only the mentioned")
                #expect(devinSaw.contains { $0.type == "IdentityRemoved" } && devinSaw.contains { $0.type == "AccessRevoked" })
                // alice: her own collaboration's start, her grant, the change, her mention, her
                // revocation; nothing after it; her own sentinel.
                #expect(
                    types("alice") == [
                        "\(aliceStarted) CollaborationStarted", "\(aliceGranted) AccessGranted", "\(change) HighlightPosted",
                        "\(mention) HighlightPosted",
                        "\(removed.position) AccessRevoked", "\(aliceLast) HighlightPosted",
                    ])
                // bob: his grant (not alice's), the notices but alice's mention.
                #expect(types("bob") == ["\(bobGranted) AccessGranted", "\(change) HighlightPosted", "\(after) HighlightPosted"])
                // erin, no member: only her own collaboration.
                #expect(types("erin") == ["\(erinStarted) CollaborationStarted", "\(erinLast) HighlightPosted"])

                // Reconnecting after alice's second event gives exactly the ones after it, once each.
                let again = Received()
                group.addTask { for try await event in alice.feed(after: change) { again.append(event) } }
                try await waitUntil(timeout: .seconds(10), "the reconnected feed reached alice's last event") { again.has(aliceLast) }
                #expect(again.all.map(\.id) == [mention, removed.position, aliceLast])
            }
        }
    }

    @Test("a bad Last-Event-ID, a position past the head or no token is refused before the stream starts")
    func refusals() async throws {
        try await LiveServer.run { server in
            let alice = server.client("alice")
            let (_, started) = try await Self.start(alice, "notes")
            for after in [started + 1_000] {
                let stream = alice.feed(after: after)
                await #expect(throws: LedgerError.self) { for try await _ in stream {} }
            }
            let unsigned = LedgerClient(baseURL: server.baseURL, transport: HTTPClientTransport()) { "not-a-token" }
            await #expect(throws: LedgerError.self) { for try await _ in unsigned.feed() {} }
        }
    }
}
