import Foundation
import LedgerDomain
import LedgerWire
import Testing
import TransparencyLog

func hash(_ n: UInt8) -> RootHash { try! RootHash(bytes: Array(repeating: n, count: 32)) }

@Suite("Collaboration decisions")
struct CommandTests {
    func started(owner: String = "owner") -> CollaborationState {
        let command = StartCollaboration(localIdentifier: "l", title: "t", initiatorHandle: "h")
        guard
            case .started(let s) = command.started(
                collaborationId: "c", owner: owner, universalLink: "u", commitments: command.commitments())
        else { fatalError() }
        return CollaborationState(started: s)
    }

    @Test("a picker group needs exactly one selected option")
    func shareOptions() throws {
        func start(_ selected: [Bool], kind: ShareOptions.Group.Kind) -> StartCollaboration {
            let options = selected.enumerated().map { ShareOptions.Option(identifier: "o\($0)", title: "O", selected: $1) }
            return StartCollaboration(
                localIdentifier: "l", title: "t", initiatorHandle: "h",
                shareOptions: ShareOptions(groups: [.init(identifier: "g", title: "G", kind: kind, options: options)]))
        }
        try start([true, false], kind: .picker).validate()
        #expect(throws: DomainError.self) { try start([true, true], kind: .picker).validate() }
        #expect(throws: DomainError.self) { try start([false, false], kind: .picker).validate() }
        try start([true, true], kind: .switches).validate()
        try start([false, false], kind: .switches).validate()
        #expect(throws: DomainError.self) {
            try StartCollaboration(localIdentifier: " ", title: "t", initiatorHandle: "h").validate()
        }
    }

    @Test("participants: owner only, removal of a granted identity revokes its account, re-adding works")
    func participants() throws {
        var state = started()
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.updateParticipants(state: state, actor: "mallory", added: [(hash(1), nil)], removed: [], now: Date())
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.updateParticipants(
                state: state, actor: "owner", added: [(hash(1), nil)], removed: [hash(1)], now: Date())
        }
        let first = try CollaborationDecisions.updateParticipants(
            state: state, actor: "owner", added: [(hash(1), nil), (hash(2), nil), (hash(1), nil)], removed: [hash(9)], now: Date())
        #expect(first.added == [hash(1), hash(2)] && first.removed.isEmpty)
        for event in first.events { state.apply(event) }
        state.apply(
            .accessGranted(
                .init(
                    rootHash: hash(1), account: "alice", proofRequestId: "r", challengeId: "c",
                    proof: IdentityProof(publicKey: [4], publicKeyIndex: 0, inclusionHashes: []), challenge: [1], signature: [2])))
        #expect(state.hasAccess("alice", at: Date()))
        let removal = try CollaborationDecisions.updateParticipants(
            state: state, actor: "owner", added: [], removed: [hash(1), hash(2)], now: Date())
        #expect(removal.removed == [hash(1), hash(2)])
        #expect(removal.revokedAccounts == ["alice"])
        for event in removal.events { state.apply(event) }
        #expect(!state.hasAccess("alice", at: Date()))
        #expect(CollaborationDecisions.decideAccess(state: state, rootHash: hash(1), account: "alice", now: Date()) == .identityRemoved)
        let again = try CollaborationDecisions.updateParticipants(
            state: state, actor: "owner", added: [(hash(1), nil)], removed: [], now: Date())
        #expect(again.added == [hash(1)])
        for event in again.events { state.apply(event) }
        #expect(CollaborationDecisions.decideAccess(state: state, rootHash: hash(1), account: "alice", now: Date()) == nil)
        #expect(CollaborationDecisions.decideAccess(state: state, rootHash: hash(7), account: "alice", now: Date()) == .unknownIdentity)
    }

    @Test("highlights: access required, triggers checked, mentions name a current identity, membership derived")
    func highlights() throws {
        var state = started()
        state.apply(.identityAdded(.init(rootHash: hash(1))))
        _ = try CollaborationDecisions.postHighlight(
            state: state, actor: "owner", kind: .change, trigger: "edit", mentioned: nil, now: Date())
        _ = try CollaborationDecisions.postHighlight(
            state: state, actor: "owner", kind: .persistence, trigger: "renamed", mentioned: nil, now: Date())
        _ = try CollaborationDecisions.postHighlight(
            state: state, actor: "owner", kind: .mention, trigger: nil, mentioned: hash(1), now: Date())
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.postHighlight(state: state, actor: "x", kind: .change, trigger: "edit", mentioned: nil, now: Date())
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.postHighlight(
                state: state, actor: "owner", kind: .change, trigger: "renamed", mentioned: nil, now: Date())
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.postHighlight(
                state: state, actor: "owner", kind: .membership, trigger: "addedCollaborator", mentioned: nil, now: Date())
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.postHighlight(
                state: state, actor: "owner", kind: .mention, trigger: nil, mentioned: hash(5), now: Date())
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.postHighlight(
                state: state, actor: "owner", kind: .mention, trigger: "edit", mentioned: hash(1), now: Date())
        }
    }

    @Test("events round-trip through their stored JSON; base64 is strict")
    func codecs() throws {
        let event = CollaborationEvent.identityRemoved(.init(rootHash: hash(3), account: "bob"))
        #expect(try CollaborationEvent(type: event.type, json: event.json) == event)
        #expect(Base64.decode("AAAA") == [0, 0, 0])
        #expect(Base64.decode("AAA") == nil)
        #expect(Base64.decode("AAB=") == nil)  // non-canonical padding bits
        #expect(throws: DomainError.self) { try RootHash(base64: Base64.encode(Array(repeating: 1, count: 31))) }
    }
}
