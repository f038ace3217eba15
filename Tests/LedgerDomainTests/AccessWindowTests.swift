import Foundation
import LedgerDomain
import LedgerWire
import Testing

/// SPEC "Time-bound access", the pure rules: windows, the refusals outside them, the start's
/// default, and the expiries decided from a state (their ids derived from the window).
@Suite("Access windows")
struct AccessWindowTests {
    func hash(_ n: UInt8) -> RootHash { try! RootHash(bytes: [UInt8](repeating: n, count: 32)) }
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func started(defaultAccess: DefaultAccess? = nil) -> CollaborationState {
        let command = StartCollaboration(localIdentifier: "l", title: "t", initiatorHandle: "h", defaultAccess: defaultAccess)
        guard
            case .started(let s) = command.started(
                collaborationId: "c1", owner: "owner", universalLink: "u", commitments: command.commitments())
        else { fatalError() }
        return CollaborationState(started: s)
    }

    func grant(_ n: UInt8, _ account: String) -> CollaborationEvent {
        .accessGranted(
            .init(
                rootHash: hash(n), account: account, proofRequestId: "r", challengeId: "c",
                proof: IdentityProof(publicKey: [4], publicKeyIndex: 0, inclusionHashes: []), challenge: [1], signature: [2]))
    }

    @Test("a window is kept to the microsecond, refused when empty or outside years 1-9999")
    func windows() throws {
        let window = try AccessWindow(notBefore: t0, notAfter: t0.addingTimeInterval(2.5))
        #expect(window.notBefore == "2027-01-15T08:00:00.000000Z" && window.notAfter == "2027-01-15T08:00:02.500000Z")
        #expect(window.refusal(at: t0.addingTimeInterval(-0.000001)) == .accessNotYetValid)
        #expect(window.refusal(at: t0) == nil)
        #expect(window.refusal(at: t0.addingTimeInterval(2.499)) == nil)
        #expect(window.refusal(at: t0.addingTimeInterval(2.5)) == .accessExpired)
        #expect(throws: DomainError.invalid("notBefore must be before notAfter", code: .invalidWindow)) {
            try AccessWindow(notBefore: t0, notAfter: t0)
        }
        for bad in [
            Date(timeIntervalSince1970: -70_000_000_000), Date(timeIntervalSince1970: 300_000_000_000),
            Date(timeIntervalSince1970: .infinity),
        ] {
            #expect(throws: DomainError.self) { try AccessWindow(notBefore: nil, notAfter: bad) }
        }
    }

    @Test("recorded times read back exactly as the formatter writes modern dates; other spellings refused")
    func recordedTimes() throws {
        var random = SystemRandomNumberGenerator()
        let formatter = ISO8601DateFormatter()
        for _ in 0..<2000 {
            let micros = Int64.random(in: -62_135_596_800_000_000..<253_402_300_800_000_000, using: &random)
            let text = RecordedTime.text(micros: micros)
            #expect(RecordedTime.micros(text) == micros, "\(text)")
            let seconds = micros / 1_000_000 - (micros % 1_000_000 < 0 ? 1 : 0)
            if seconds > -12_219_292_800 {  // from 1582-10-15 on, where the formatter is Gregorian too
                #expect(text.prefix(19) + "Z" == formatter.string(from: Date(timeIntervalSince1970: Double(seconds))), "\(text)")
            }
        }
        #expect(RecordedTime.text(micros: -62_135_596_800_000_000) == "0001-01-01T00:00:00.000000Z")
        #expect(RecordedTime.text(micros: 253_402_300_799_999_999) == "9999-12-31T23:59:59.999999Z")
        for bad in [
            "2026-02-30T00:00:00.000000Z", "2026-11-26T24:00:00.000000Z", "2026-11-26T10:00:00.00000Z", "2026-11-26 10:00:00.000000Z",
            "0000-01-01T00:00:00.000000Z", "2026-11-26T10:00:00.000000+00:00", "２026-11-26T10:00:00.000000Z",
        ] {
            #expect(RecordedTime.micros(bad) == nil, "\(bad)")
        }
    }

    @Test("defaultAccess: ISO 8601 durations of 1 s to 100 years; malformed ones refused")
    func durations() throws {
        #expect(try DefaultAccess(duration: "PT2S").window(from: t0).notAfterDate == t0.addingTimeInterval(2))
        #expect(try DefaultAccess(duration: "P7D").window(from: t0).notAfterDate == t0.addingTimeInterval(7 * 86_400))
        #expect(try DefaultAccess(duration: "P1W").window(from: t0).notAfterDate == t0.addingTimeInterval(7 * 86_400))
        #expect(try DefaultAccess(duration: "P1DT1H30M0.5S").window(from: t0).notAfterDate == t0.addingTimeInterval(86_400 + 5_400.5))
        #expect(try DefaultAccess(duration: "P1M").window(from: t0).notAfterDate == t0.addingTimeInterval(31 * 86_400))  // January
        #expect(try DefaultAccess(duration: "P1Y2M3W4DT5H6M7S").duration == "P1Y2M3W4DT5H6M7S")
        for bad in [
            "", "P", "PT", "7D", "P7", "PT0S", "PT0.5S", "P1H", "PT1D", "P1.5D", "P-1D", "P200Y", "P1DT", "PT1S1M", "P99999999999D", "P１D",
        ] {
            #expect(throws: DomainError.self, "\(bad)") { try DefaultAccess(duration: bad) }
        }
    }

    @Test("participants: windows on adding, the start's default, changes only on current identities")
    func participants() throws {
        var state = started(defaultAccess: try DefaultAccess(duration: "P1D"))
        let window = try AccessWindow(notBefore: nil, notAfter: t0.addingTimeInterval(60))
        let first = try CollaborationDecisions.updateParticipants(
            state: state, actor: "owner", added: [(hash(1), window), (hash(2), nil)], removed: [], now: t0)
        for event in first.events { state.apply(event) }
        #expect(state.identities[hash(1).base64]?.window == window)
        #expect(state.identities[hash(2).base64]?.window.notAfterDate == t0.addingTimeInterval(86_400))
        #expect(CollaborationDecisions.expiries(state: state, now: window.notAfterDate!).count == 1, "the earlier window falls due first")

        let moved = try AccessWindow(notBefore: nil, notAfter: t0.addingTimeInterval(120))
        let change = try CollaborationDecisions.updateParticipants(
            state: state, actor: "owner", added: [], removed: [], windows: [(hash(1), moved)], now: t0)
        #expect(change.windowsChanged == [hash(1)] && change.events == [.accessWindowChanged(.init(rootHash: hash(1), window: moved))])
        for event in change.events { state.apply(event) }
        let same = try CollaborationDecisions.updateParticipants(
            state: state, actor: "owner", added: [], removed: [], windows: [(hash(1), moved)], now: t0)
        #expect(same.events.isEmpty)
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.updateParticipants(
                state: state, actor: "owner", added: [], removed: [], windows: [(hash(9), moved)], now: t0)
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.updateParticipants(
                state: state, actor: "owner", added: [], removed: [hash(1)], windows: [(hash(1), moved)], now: t0)
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.updateParticipants(
                state: state, actor: "mallory", added: [], removed: [], windows: [(hash(1), moved)], now: t0)
        }
        // A window that has already ended, and another window for a current identity, are refused.
        #expect(throws: DomainError.invalid("identity \(hash(1)): notAfter must be later than now", code: .invalidWindow)) {
            try CollaborationDecisions.updateParticipants(
                state: state, actor: "owner", added: [], removed: [], windows: [(hash(1), moved)], now: t0.addingTimeInterval(120))
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.updateParticipants(
                state: state, actor: "owner", added: [(hash(3), try AccessWindow(notBefore: nil, notAfter: t0.addingTimeInterval(1)))],
                removed: [],
                now: t0.addingTimeInterval(1))
        }
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.updateParticipants(state: state, actor: "owner", added: [(hash(2), moved)], removed: [], now: t0)
        }
        #expect(
            try CollaborationDecisions.updateParticipants(state: state, actor: "owner", added: [(hash(1), moved)], removed: [], now: t0)
                .events.isEmpty)
    }

    @Test("proofs: refused before notBefore and from notAfter on, and on an expired identity")
    func proofs() throws {
        var state = started()
        let window = try AccessWindow(notBefore: t0, notAfter: t0.addingTimeInterval(10))
        state.apply(.identityAdded(.init(rootHash: hash(1), window: window)))
        #expect(
            CollaborationDecisions.decideAccess(state: state, rootHash: hash(1), account: "a", now: t0.addingTimeInterval(-1))
                == .accessNotYetValid)
        #expect(CollaborationDecisions.decideAccess(state: state, rootHash: hash(1), account: "a", now: t0.addingTimeInterval(5)) == nil)
        #expect(
            CollaborationDecisions.decideAccess(state: state, rootHash: hash(1), account: "a", now: t0.addingTimeInterval(10))
                == .accessExpired)
        state.apply(grant(1, "a"))
        #expect(state.identities[hash(1).base64]?.window == window, "a grant keeps the window")
        for (event, _) in CollaborationDecisions.expiries(state: state, now: t0.addingTimeInterval(10)) { state.apply(event) }
        #expect(!state.hasAccess("a", at: Date()) && !state.isCurrent(hash(1)))
        #expect(
            CollaborationDecisions.decideAccess(state: state, rootHash: hash(1), account: "a", now: t0.addingTimeInterval(5))
                == .accessExpired)
    }

    @Test("expiries: only due ones, dueAt the window's end however late, one id per window on every decision")
    func expiries() throws {
        var state = started()
        let soon = try AccessWindow(notBefore: nil, notAfter: t0)
        let later = try AccessWindow(notBefore: nil, notAfter: t0.addingTimeInterval(3600))
        state.apply(.identityAdded(.init(rootHash: hash(1), window: soon)))
        state.apply(.identityAdded(.init(rootHash: hash(2), window: later)))
        state.apply(.identityAdded(.init(rootHash: hash(3))))
        state.apply(grant(1, "a"))
        #expect(CollaborationDecisions.expiries(state: state, now: t0.addingTimeInterval(-0.001)).isEmpty)
        let late = CollaborationDecisions.expiries(state: state, now: t0.addingTimeInterval(86_400))
        #expect(
            late.map(\.event) == [
                .accessExpired(.init(rootHash: hash(1), account: "a", dueAt: soon.notAfter!)),
                .accessExpired(.init(rootHash: hash(2), account: nil, dueAt: later.notAfter!)),
            ])
        let once = CollaborationDecisions.expiries(state: state, now: t0)
        #expect(once.count == 1 && once[0].event == .accessExpired(.init(rootHash: hash(1), account: "a", dueAt: soon.notAfter!)))
        #expect(once[0].id == CollaborationDecisions.expiries(state: state, now: t0.addingTimeInterval(5)).first?.id)

        // Expired, removed... re-invited with the same window: a new expiry with a new id.
        state.apply(once[0].event)
        #expect(CollaborationDecisions.expiries(state: state, now: t0).isEmpty)
        state.apply(.identityAdded(.init(rootHash: hash(1), window: soon)))
        let again = CollaborationDecisions.expiries(state: state, now: t0)
        #expect(again.count == 1 && again[0].id != once[0].id)
        #expect(again[0].event == .accessExpired(.init(rootHash: hash(1), account: nil, dueAt: soon.notAfter!)))

        // A moved window: the old expiry is no longer due; the new one has its own id.
        state.apply(.accessWindowChanged(.init(rootHash: hash(1), window: later)))
        #expect(CollaborationDecisions.expiries(state: state, now: t0).isEmpty)
        // A removal cancels it.
        state.apply(.identityRemoved(.init(rootHash: hash(1), account: nil)))
        #expect(
            CollaborationDecisions.expiries(state: state, now: t0.addingTimeInterval(86_400)).map(\.event) == [
                .accessExpired(.init(rootHash: hash(2), account: nil, dueAt: later.notAfter!))
            ])
    }

    @Test("the feed: an account's expiry is its own to see, and it stops seeing the collaboration")
    func feed() throws {
        var audience = FeedAudience(account: "a", held: ["c1": [hash(1).base64]])
        let expiry = audience.sees(.accessExpired(.init(rootHash: hash(1), account: "a", dueAt: "x")), in: "c1")
        #expect(expiry && audience.held.isEmpty)
        let notice = audience.sees(.highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "o")), in: "c1")
        #expect(!notice)
        var owner = FeedAudience(account: "o", owned: ["c1"])
        let seen = owner.sees(.accessExpired(.init(rootHash: hash(1), account: "a", dueAt: "x")), in: "c1")
        let window = owner.sees(
            .accessWindowChanged(.init(rootHash: hash(1), window: try AccessWindow(notBefore: nil, notAfter: t0))), in: "c1")
        #expect(seen && window)

        // A notice after the end of the member's window is not the member's, before any AccessExpired.
        var member = FeedAudience(account: "a")
        let end = try AccessWindow(notBefore: nil, notAfter: t0)
        let granted = CollaborationEvent.AccessGranted(
            rootHash: hash(1), account: "a", proofRequestId: "r", challengeId: "c",
            proof: IdentityProof(publicKey: [4], publicKeyIndex: 0, inclusionHashes: []), challenge: [1], signature: [2], window: end)
        let micros = end.notAfterMicros!
        let grant = member.sees(.accessGranted(granted), in: "c1", at: micros - 10)
        let before = member.sees(
            .highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "o")), in: "c1", at: micros - 1)
        let after = member.sees(
            .highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "o")), in: "c1", at: micros)
        #expect(grant && before && !after)
        _ = member.sees(
            .accessWindowChanged(.init(rootHash: hash(1), window: try AccessWindow(notBefore: nil, notAfter: t0.addingTimeInterval(60)))),
            in: "c1", at: micros)
        let moved = member.sees(
            .highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "o")), in: "c1", at: micros + 1)
        #expect(moved, "a window moved later gives the notices back")
    }

    @Test("a window holds at both ends: a grant starting later gives no access and no notices until then")
    func scheduled() throws {
        var state = started()
        state.apply(.identityAdded(.init(rootHash: hash(1))))
        state.apply(grant(1, "a"))
        #expect(state.hasAccess("a", at: t0))
        let later = try AccessWindow(notBefore: t0.addingTimeInterval(10), notAfter: t0.addingTimeInterval(20))
        state.apply(.accessWindowChanged(.init(rootHash: hash(1), window: later)))
        #expect(!state.hasAccess("a", at: t0) && state.hasAccess("a", at: t0.addingTimeInterval(10)))
        #expect(!state.hasAccess("a", at: t0.addingTimeInterval(20)) && state.hasAccess("owner", at: t0))
        #expect(throws: DomainError.self) {
            try CollaborationDecisions.postHighlight(state: state, actor: "a", kind: .change, trigger: "edit", mentioned: nil, now: t0)
        }
        _ = try CollaborationDecisions.postHighlight(
            state: state, actor: "a", kind: .change, trigger: "edit", mentioned: nil, now: t0.addingTimeInterval(10))

        let start = later.notBeforeMicros!
        var member = FeedAudience(
            account: "a", held: ["c1": [hash(1).base64]], windows: ["c1": [hash(1).base64: .init(start: start, end: nil)]])
        let notice = CollaborationEvent.highlightPosted(.init(kind: .change, trigger: "edit", mentionedRootHash: nil, account: "o"))
        let early = member.sees(notice, in: "c1", at: start - 1)
        let onTime = member.sees(notice, in: "c1", at: start)
        #expect(!early && onTime)
        _ = member.sees(.accessWindowChanged(.init(rootHash: hash(1), window: later)), in: "c1", at: start)
        let after = member.sees(notice, in: "c1", at: later.notAfterMicros!)
        #expect(!after, "a window change gives both ends")
    }
}
