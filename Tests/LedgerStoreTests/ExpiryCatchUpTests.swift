import Foundation
import LedgerDomain
import LedgerStore
import LedgerWire
import LedgerTestSupport
import Testing

/// A command decides on the collaboration as it stands at its time: a window that has ended is
/// expired first, by the command's own append, with the expiry service's event id (no expiry
/// service runs here), so no access lingers after `notAfter` however late the service is.
@Suite("Expiry before a command")
struct ExpiryCatchUpTests {
    @Test("after notAfter, with no expiry service: the member's notice is refused, the owner's append carries the expiry first, with the service's id")
    func catchUp() async throws {
        try await withTestStore { store, _, _ in
            let collaborations = Collaborations(store: store)
            let id = UUID().uuidString.lowercased()
            let command = StartCollaboration(localIdentifier: "l", title: "t", initiatorHandle: "h")
            guard case .started(let started) = command.started(collaborationId: id, owner: "owner", universalLink: "u", commitments: command.commitments())
            else { Issue.record("no start"); return }
            _ = try await store.append(.init(
                streamId: Streams.collaboration(id), expectedVersion: .noStream, events: [CollaborationEvent.started(started).newEvent(metadata: .init())],
                state: CollaborationState(started: started).json))
            let hash = try RootHash(bytes: [UInt8](repeating: 7, count: 32))
            let end = Date().addingTimeInterval(0.3)
            let window = try AccessWindow(notBefore: nil, notAfter: end)
            _ = try await collaborations.decideAndAppend(id) { _ in
                .init(events: [
                    .identityAdded(.init(rootHash: hash, window: window)),
                    .accessGranted(.init(
                        rootHash: hash, account: "member", proofRequestId: "r", challengeId: "c",
                        proof: IdentityProof(publicKey: [4], publicKeyIndex: 0, inclusionHashes: []), challenge: [1], signature: [2], window: window)),
                ], metadata: EventMetadata(actor: "owner"))
            }
            try await waitUntil(timeout: .seconds(5), "the window's end") { Date() > end }

            let notice = CollaborationEvent.highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "member"))
            await #expect(throws: DomainError.self) {
                _ = try await collaborations.decideAndAppend(id) { state in
                    _ = try CollaborationDecisions.postHighlight(state: state, actor: "member", kind: .change, trigger: "edit", mentioned: nil, now: Date())
                    return .init(events: [notice], metadata: EventMetadata(actor: "member"))
                }
            }
            let current = try await collaborations.current(id)
            let expected = CollaborationDecisions.expiries(state: current.state, now: Date())
            #expect(expected.count == 1)
            _ = try await collaborations.decideAndAppend(id) { state in
                #expect(!state.hasAccess("member", at: Date()), "the command decides after the expiry")
                return .init(events: [.highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "owner"))],
                             metadata: EventMetadata(actor: "owner"))
            }
            let events = try await store.readStream(Streams.collaboration(id)).suffix(2)
            #expect(events.map(\.type) == ["AccessExpired", "HighlightPosted"])
            #expect(events.first?.eventId == expected.first?.id)
            #expect(CollaborationDecisions.expiries(state: try await collaborations.current(id).state, now: Date()).isEmpty)
        }
    }
}
