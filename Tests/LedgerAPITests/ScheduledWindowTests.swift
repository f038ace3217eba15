import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerTestSupport
import Testing

/// SPEC "A window holds at both ends", against a live server: a granted identity whose window
/// is moved to start later gives its account nothing until then (reads, posts, "my
/// collaborations", the feed), members show it `scheduled`, and at `notBefore` access comes back
/// without a new proof.
@Suite("A window holds at both ends")
struct ScheduledWindowTests {
    static func refusal(_ body: () async throws -> Void) async -> String? {
        guard let error = await rejection(body) else { return nil }
        return "\(error.status) \(error.code)"
    }

    /// A granted window moved to start later: 403 on reads and posts, left out of my
    /// collaborations, silent feed, scheduled in members and counts; back at notBefore without a
    /// proof.
    @Test("a granted window moved later: refused, hidden, silent and scheduled until notBefore, then open")
    func grantedWindowMovedForward() async throws {
        try await LiveServer.run { server in
            let (devin, alice) = (server.client("devin"), server.client("alice"))
            let (id, started) = try await TimeBoundAccessTests.start(devin, "scheduled")
            let person = SimulatedPerson(collaborationId: id, devices: 1)
            _ = try await devin.updateParticipants(added: [person.rootHashData], in: id)
            guard case .granted = try await verify(alice, person, in: id) else {
                Issue.record("alice's proof was not granted")
                return
            }
            let grantedAt = Date()
            try await withThrowingTaskGroup(of: Void.self) { group in
                defer { group.cancelAll() }
                let aliceSeen = TimeBoundAccessTests.listen(alice, after: started, in: &group)
                // The start 90 s ahead: the checks below must all run before it, on a machine the whole suite
                // loads (25 s, then 45 s, were once too little, the suite having grown).
                let start = TestWindows.kept(Date().addingTimeInterval(90))
                let moved = try await devin.updateParticipants(
                    windows: [IdentityWindow(rootHash: person.rootHashData, notBefore: start, notAfter: start.addingTimeInterval(3600))],
                    in: id)
                let hidden = try await devin.postHighlight(.change, trigger: "edit", in: id)

                #expect(await Self.refusal { _ = try await alice.collaboration(id, minPosition: moved.position) } == "403 no_access")
                #expect(await Self.refusal { _ = try await alice.members(of: id) } == "403 no_access")
                #expect(await Self.refusal { _ = try await alice.highlights(in: id) } == "403 no_access")
                #expect(await Self.refusal { try await alice.postHighlight(.change, trigger: "edit", in: id) } == "403 no_access")
                #expect(
                    try await alice.myCollaborations(minPosition: moved.position).collaborations.allSatisfy { $0.collaborationId != id })
                let member = try #require(try await TimeBoundAccessTests.member(devin, id, person, minPosition: moved.position))
                #expect(member.state == "scheduled" && TimeBoundAccessTests.same(member.notBefore, start), "\(member)")
                let counts = try await devin.collaboration(id).memberCounts
                #expect(counts.scheduled == 1 && counts.granted == 0, "\(counts)")
                // asOf on both sides of the start, and before the window was moved.
                #expect(
                    try await TimeBoundAccessTests.member(devin, id, person, asOf: start.addingTimeInterval(-0.5))?.state == "scheduled")
                #expect(try await TimeBoundAccessTests.member(devin, id, person, asOf: start.addingTimeInterval(1))?.state == "granted")
                #expect(try await TimeBoundAccessTests.member(devin, id, person, asOf: grantedAt)?.state == "granted")
                #expect(Date() < start, "the checks above ran before the window's start; the test proves nothing otherwise")

                // At notBefore: access again, with no new proof.
                // Until the start (up to 90 s from the window's move), then up to a minute more.
                try await waitUntil(timeout: .seconds(150), "alice reads the collaboration again") {
                    (try? await alice.collaboration(id)) != nil
                }
                #expect(Date() >= start.addingTimeInterval(-0.001), "access came back before notBefore")
                let seenAgain = try await alice.postHighlight(.change, trigger: "edit", in: id)
                #expect(try await alice.myCollaborations(minPosition: seenAgain).collaborations.contains { $0.collaborationId == id })
                #expect(try await TimeBoundAccessTests.member(devin, id, person, minPosition: seenAgain)?.state == "granted")
                let shown = try await devin.postHighlight(.change, trigger: "edit", in: id)
                try await waitUntil(timeout: .seconds(30), "alice's feed has the notice posted after the start") {
                    aliceSeen.all.contains { $0.entry.position == shown }
                }
                #expect(!aliceSeen.all.contains { $0.entry.position == hidden }, "a notice before notBefore reached alice's feed")
            }
        }
    }
}
