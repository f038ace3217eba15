import Foundation
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Testing

/// A command decides on the collaboration as it stands at its time: a window that has ended is
/// expired first, by the command's own append, with the expiry service's event id (no expiry
/// service runs here), so no access lingers after `notAfter` however late the service is.
@Suite("Expiry before a command")
struct ExpiryCatchUpTests {
    /// A collaboration whose member's window (granted) has ended, with no expiry appended.
    static func endedWindow(_ store: EventStore, _ collaborations: CollaborationStreams) async throws -> String {
        let id = UUID().uuidString.lowercased()
        let command = StartCollaboration(localIdentifier: "l", title: "t", initiatorHandle: "h")
        guard
            case .started(let started) = command.started(
                collaborationId: id, owner: "owner", universalLink: "u", commitments: command.commitments())
        else { preconditionFailure("a start command starts a collaboration") }
        _ = try await store.append(
            .init(
                streamId: Streams.collaboration(id), expectedVersion: .noStream,
                events: [CollaborationEvent.started(started).newEvent(metadata: .init())],
                state: CollaborationState(started: started).json))
        let hash = try RootHash(bytes: [UInt8](repeating: 7, count: 32))
        let end = Date().addingTimeInterval(0.3)
        let window = try AccessWindow(notBefore: nil, notAfter: end)
        _ = try await collaborations.decideAndAppend(id) { _ in
            .init(
                events: [
                    .identityAdded(.init(rootHash: hash, window: window)),
                    .accessGranted(
                        .init(
                            rootHash: hash, account: "member", proofRequestId: "r", challengeId: "c",
                            proof: IdentityProof(publicKey: [4], publicKeyIndex: 0, inclusionHashes: []), challenge: [1], signature: [2],
                            window: window)),
                ], metadata: EventMetadata(actor: "owner"))
        }
        try await waitUntil(timeout: .seconds(5), "the window's end") { Date() > end }
        return id
    }

    /// After notAfter, with no expiry service: the member's notice is refused, the owner's append
    /// carries the expiry first, with the service's id.
    @Test("after notAfter, no expiry service: the notice refused, the owner's append carries the expiry first")
    func catchUp() async throws {
        try await withTestStore { store, _, _ in
            let collaborations = CollaborationStreams(store: store)
            let id = try await Self.endedWindow(store, collaborations)

            let notice = CollaborationEvent.highlightPosted(
                .init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "member"))
            await #expect(throws: DomainError.self) {
                _ = try await collaborations.decideAndAppend(id) { state in
                    _ = try CollaborationDecisions.postHighlight(
                        state: state, actor: "member", kind: .change, trigger: "edit", mentioned: nil, now: Date())
                    return .init(events: [notice], metadata: EventMetadata(actor: "member"))
                }
            }
            let current = try await collaborations.current(id)
            let expected = CollaborationDecisions.expiries(state: current.state, now: Date())
            #expect(expected.count == 1)
            _ = try await collaborations.decideAndAppend(id) { state in
                #expect(!state.hasAccess("member", at: Date()), "the command decides after the expiry")
                return .init(
                    events: [.highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "owner"))],
                    metadata: EventMetadata(actor: "owner"))
            }
            let events = try await store.readStream(Streams.collaboration(id)).suffix(2)
            #expect(events.map(\.type) == ["AccessExpired", "HighlightPosted"])
            #expect(events.first?.eventId == expected.first?.id)
            #expect(CollaborationDecisions.expiries(state: try await collaborations.current(id).state, now: Date()).isEmpty)
        }
    }

    /// The race: an expiry appended between a command's read and its append (the command's catch-up
    /// carries the same derived id) is a version conflict, never an idempotency mismatch; the
    /// command then decides again.
    @Test("an expiry appended mid-command is a version conflict, never an idempotency mismatch; decided again")
    func raceWithTheService() async throws {
        try await withTestStore { store, _, _ in
            let collaborations = CollaborationStreams(store: store)
            let id = try await Self.endedWindow(store, collaborations)
            // The command reads the collaboration and decides: the expiry first, then its notice.
            let read = try await collaborations.current(id)
            let due = CollaborationDecisions.expiries(state: read.state, now: Date())
            #expect(due.count == 1)
            let notice = CollaborationEvent.highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "owner"))
            // Meanwhile the expiry service appends the same expiry (same derived id) at the version read.
            var expired = read.state
            for expiry in due { expired.apply(expiry.event) }
            _ = try await store.append(
                .init(
                    streamId: Streams.collaboration(id), expectedVersion: .exact(read.version),
                    events: due.map { $0.event.newEvent(metadata: .init(), id: $0.id) }, state: expired.json))
            // The command's append, built on what it read: its version is stale.
            var next = expired
            next.apply(notice)
            let stale = AppendRequest(
                streamId: Streams.collaboration(id), expectedVersion: .exact(read.version),
                events: due.map { $0.event.newEvent(metadata: .init(), id: $0.id) } + [
                    notice.newEvent(metadata: EventMetadata(actor: "owner"))
                ],
                state: next.json)
            do {
                _ = try await store.append(stale)
                Issue.record("a stale append went through")
            } catch let error as StoreError {
                #expect(error.isVersionConflict && !error.isIdempotencyMismatch, "\(error)")
            }
            // Through the command loop, the same race ends in the notice alone, after the service's expiry.
            let outcome = try await collaborations.decideAndAppend(id) { state in
                .init(events: [notice], metadata: EventMetadata(actor: "owner"))
            }
            #expect(outcome.events.count == 1)
            let events = try await store.readStream(Streams.collaboration(id)).suffix(2)
            #expect(events.map(\.type) == ["AccessExpired", "HighlightPosted"])
        }
    }
}
