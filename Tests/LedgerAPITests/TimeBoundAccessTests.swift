import Foundation
import LedgerAPI
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerProjections
import LedgerStore
import LedgerTestSupport
import LedgerTokens
import Logging
import PostgresNIO
import Synchronization
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// SPEC "Time-bound access" against a live server (the services of `ledger serve`, its expiry
/// service among them) and its PostgreSQL: windows, the refusals outside them, `AccessExpired`
/// on the feed, in the audit and in members as of any moment, cancelled expiries, the start's
/// default, a rebuild, and an erasure after an expiry.
@Suite("Time-bound access")
struct TimeBoundAccessTests {
    /// What one account's feed delivered so far.
    final class Received: Sendable {
        private let events = Mutex<[FeedEvent]>([])
        var all: [FeedEvent] { events.withLock { $0 } }
        func append(_ event: FeedEvent) { events.withLock { $0.append(event) } }
    }

    static func listen(_ client: LedgerClient, after: Int64, in group: inout ThrowingTaskGroup<Void, any Error>) -> Received {
        let received = Received()
        group.addTask {
            for try await event in client.feed(after: after) { received.append(event) }
        }
        return received
    }

    static func start(_ client: LedgerClient, _ title: String, defaultAccess: String? = nil) async throws -> (id: String, position: Int64) {
        let prepared = try await client.prepareCollaboration(
            localIdentifier: title, title: title, initiator: Initiator(handle: "\(title)@example.com"), defaultAccess: defaultAccess)
        return (prepared.identifier, prepared.position)
    }

    static func member(
        _ client: LedgerClient, _ id: String, _ person: SimulatedPerson, asOf: Date? = nil, minPosition: Int64? = nil
    ) async throws -> Members.Member? {
        try await client.members(of: id, asOf: asOf, minPosition: minPosition).members.first {
            $0.rootHash == person.rootHashData.base64EncodedString()
        }
    }

    static func expiries(_ client: LedgerClient, _ id: String) async throws -> [History.Entry] {
        try await Self.all(client.allHistory(of: id)).filter { $0.type == "AccessExpired" }
    }

    /// Whether `date` is `expected` as the API writes it: to the millisecond, cut (a whole
    /// millisecond as a `Date` may be a hair below it).
    static func same(_ date: Date?, _ expected: Date) -> Bool { date.map { abs($0.timeIntervalSince(expected)) < 0.0011 } ?? false }

    static func all<Item: Sendable>(_ pages: LedgerPages<Item>) async throws -> [Item] {
        var items: [Item] = []
        for try await item in pages { items.append(item) }
        return items
    }

    /// A 2 s window: granted inside, refused after; AccessExpired on the feed at dueAt (never
    /// before), in the audit and members; asOf either side; notBefore refuses early proofs.
    @Test("a 2 s window: granted inside, refused after, expired on the feed at dueAt, in audit and members")
    func twoSecondWindow() async throws {
        try await LiveServer.run { server in
            let (devin, alice, bob) = (server.client("devin"), server.client("alice"), server.client("bob"))
            let auditor = server.client("auditor", roles: ["auditor"])
            let (id, started) = try await Self.start(devin, "window")
            let (alicePerson, bobPerson) = (
                SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1)
            )
            let update = try await devin.updateParticipants(
                addedWithWindows: [
                    IdentityWindow(rootHash: alicePerson.rootHashData, notAfter: Date().addingTimeInterval(600)),
                    IdentityWindow(rootHash: bobPerson.rootHashData, notBefore: Date().addingTimeInterval(3600)),
                ], in: id)
            #expect(update.added.count == 2)

            let window = try await withThrowingTaskGroup(of: Void.self) { group -> (due: Date, expiredAt: Date)? in
                defer { group.cancelAll() }
                let seen = Self.listen(devin, after: started, in: &group)
                let aliceSeen = Self.listen(alice, after: started, in: &group)
                guard case .granted = try await verify(alice, alicePerson, in: id) else {
                    Issue.record("alice's proof inside her window was not granted")
                    return nil
                }
                let early = await rejection { _ = try await verify(bob, bobPerson, in: id) }
                #expect(early?.reason == "access_not_yet_valid", "\(String(describing: early))")
                // Her window made 2 s long, from now (the grant above may have taken a while).
                let (due, changed) = try await TestWindows.endIn(2, devin, id, [alicePerson])
                #expect(Self.same(try await Self.member(devin, id, alicePerson, minPosition: changed)?.notAfter, due))

                try await waitUntil(timeout: .seconds(30), "AccessExpired on the owner's feed") {
                    seen.all.contains { $0.type == "AccessExpired" }
                }
                let expired = try #require(seen.all.first { $0.type == "AccessExpired" })
                // Never early; the 1 s target is a timing goal, measured by `ledger bench expiry`
                // (p99) rather than here, where every suite of the package shares two cores.
                let lag = expired.entry.time.timeIntervalSince(due)
                #expect(lag >= -0.001 && lag <= 10, "AccessExpired committed \(lag) s after dueAt")
                #expect(
                    expired.entry.data["dueAt"] == .string(RecordedTime.text(micros: Int64((due.timeIntervalSince1970 * 1e6).rounded()))))
                #expect(expired.entry.data["account"] != nil, "the expiry names the account that held access")
                try await waitUntil(timeout: .seconds(30), "alice's feed has her expiry") {
                    aliceSeen.all.contains { $0.type == "AccessExpired" }
                }
                return (due, expired.entry.time)
            }
            guard let (due, expiredAt) = window else { return }

            let late = await rejection { _ = try await verify(alice, alicePerson, in: id) }
            #expect(late?.reason == "access_expired", "\(String(describing: late))")
            try await waitUntil(timeout: .seconds(30), "members show alice expired") {
                try await Self.member(devin, id, alicePerson)?.state == "expired"
            }
            #expect(try await Self.member(devin, id, alicePerson, asOf: due.addingTimeInterval(-1))?.state == "granted")
            // As of a second after dueAt, or of the expiry's commit if later (it may come up to
            // 10 s late here, above): expired.
            let after = max(due.addingTimeInterval(1), expiredAt.addingTimeInterval(0.001))
            #expect(try await Self.member(devin, id, alicePerson, asOf: after)?.state == "expired")
            #expect(try await devin.collaboration(id).memberCounts.expired == 1)
            let records = try await Self.all(auditor.allAccessRecords(collaboration: id))
            let record = try #require(records.first { $0.change == "expired" })
            #expect(record.accountId == "alice" && Self.same(record.dueAt, due))
            #expect(try await alice.myCollaborations().collaborations.allSatisfy { $0.collaborationId != id })
            #expect(try await Self.expiries(devin, id).count == 1)
        }
    }

    @Test("a window moved and an identity removed before dueAt append no expiry; one left as it was expires")
    func cancelled() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let (id, _) = try await Self.start(devin, "cancelled")
            let (moved, removed, kept) = (
                SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1),
                SimulatedPerson(collaborationId: id, devices: 1)
            )
            // 30 s: the two updates below must both land before it, on a machine the whole suite loads.
            let due = TestWindows.kept(Date().addingTimeInterval(30))
            _ = try await devin.updateParticipants(
                addedWithWindows: [moved, removed, kept].map { IdentityWindow(rootHash: $0.rootHashData, notAfter: due) }, in: id)
            let later = TestWindows.kept(Date().addingTimeInterval(3600))
            let change = try await devin.updateParticipants(
                removed: [removed.rootHashData], windows: [IdentityWindow(rootHash: moved.rootHashData, notAfter: later)], in: id)
            let changedAt = try #require(
                try await devin.history(of: id, minPosition: change.position).events.last { $0.position == change.position })
            #expect(changedAt.time < due, "the change was recorded after the windows' end")
            #expect(change.windowsChanged == [moved.rootHashData] && change.removed == [removed.rootHashData])
            #expect(Self.same(try await Self.member(devin, id, moved, minPosition: change.position)?.notAfter, later))
            try await waitUntil(timeout: .seconds(90), "the unchanged window's expiry") { try await Self.expiries(devin, id).count >= 1 }
            // The three fell due together: the service decided the collaboration once, at or after dueAt.
            let expiries = try await Self.expiries(devin, id)
            #expect(expiries.map { $0.data["rootHash"] } == [.string(kept.rootHashData.base64EncodedString())])
            #expect(try await Self.member(devin, id, moved)?.state == "invited")
            #expect(Self.same(try await Self.member(devin, id, moved)?.notAfter, later))
            #expect(try await Self.member(devin, id, removed) == nil)
        }
    }

    @Test("defaultAccess applies without a window; bad windows or durations: 400 invalid_window, no change")
    func defaultAccess() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let refused = await rejection { _ = try await Self.start(devin, "bad-default", defaultAccess: "P1H") }
            #expect(refused?.status == 400 && refused?.code == "invalid_window")
            let (id, _) = try await Self.start(devin, "defaulted", defaultAccess: "PT2S")
            let (plain, own) = (SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1))
            let ownEnd = TestWindows.kept(Date().addingTimeInterval(3600))
            let before = Date()
            let update = try await devin.updateParticipants(
                added: [plain.rootHashData], addedWithWindows: [IdentityWindow(rootHash: own.rootHashData, notAfter: ownEnd)], in: id)
            let after = Date()
            let plainEnd = try #require(try await Self.member(devin, id, plain, minPosition: update.position)?.notAfter)
            #expect(plainEnd >= before.addingTimeInterval(1.999) && plainEnd <= after.addingTimeInterval(2.001))
            #expect(Self.same(try await Self.member(devin, id, own)?.notAfter, ownEnd))

            let backwards = await rejection {
                _ = try await devin.updateParticipants(
                    addedWithWindows: [
                        IdentityWindow(
                            rootHash: SimulatedPerson(collaborationId: id, devices: 1).rootHashData,
                            notBefore: ownEnd, notAfter: ownEnd.addingTimeInterval(-1))
                    ], in: id)
            }
            #expect(backwards?.status == 400 && backwards?.code == "invalid_window")
            let unknown = await rejection {
                _ = try await devin.updateParticipants(
                    windows: [IdentityWindow(rootHash: SimulatedPerson(collaborationId: id, devices: 1).rootHashData, notAfter: ownEnd)],
                    in: id)
            }
            #expect(unknown?.code == "unknown_identity")
            let past = await rejection {
                _ = try await devin.updateParticipants(
                    windows: [IdentityWindow(rootHash: own.rootHashData, notAfter: Date().addingTimeInterval(-1))], in: id)
            }
            #expect(past?.status == 400 && past?.code == "invalid_window")
            // A misspelt bound is refused, not read as no window.
            var request = URLRequest(url: server.baseURL.appendingPathComponent("v1/collaborations/\(id)/participants"))
            request.httpMethod = "POST"
            request.setValue("Bearer \(try await server.authority.issue(account: "devin"))", forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(
                #"{"windows": [{"rootHash": "\#(own.rootHashData.base64EncodedString())", "not_after": "2030-01-01T00:00:00Z"}]}"#.utf8)
            let (body, status) = try await HTTPClientTransport().send(request)
            #expect(
                status == 400 && String(decoding: body, as: UTF8.self).contains("not_after"),
                "\(status) \(String(decoding: body, as: UTF8.self))")
            let since = try await devin.history(of: id).events.filter { $0.position > update.position && $0.type != "AccessExpired" }
            #expect(since.isEmpty, "refusals appended \(since.map(\.type))")

            try await waitUntil(timeout: .seconds(30), "the default window's expiry") {
                try await Self.member(devin, id, plain)?.state == "expired"
            }
            #expect(try await Self.member(devin, id, own)?.state == "invited")
        }
    }

    @Test("a rebuild of membership gives the same members as of every moment, expiries included")
    func rebuild() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let (id, _) = try await Self.start(devin, "rebuilt")
            let people = (0..<3).map { _ in SimulatedPerson(collaborationId: id, devices: 1) }
            let start = Date()
            _ = try await devin.updateParticipants(
                added: [people[2].rootHashData],
                addedWithWindows: people.prefix(2).map {
                    IdentityWindow(rootHash: $0.rootHashData, notAfter: start.addingTimeInterval(600))
                },
                in: id)
            guard case .granted = try await verify(server.client("p0"), people[0], in: id) else {
                Issue.record("not granted")
                return
            }
            let (due, _) = try await TestWindows.endIn(3, devin, id, Array(people.prefix(2)))
            try await waitUntil(timeout: .seconds(30), "both expiries") { try await Self.expiries(devin, id).count == 2 }
            // The members view folds them a moment later: what is read below is the view caught up.
            try await waitUntil(timeout: .seconds(30), "both expiries in the members view") {
                try await devin.members(of: id).members.filter { $0.state == "expired" }.count == 2
            }
            let moments = [nil, start, due.addingTimeInterval(-0.5), due, due.addingTimeInterval(0.5), Date()]
            var before: [[Members.Member]] = []
            for moment in moments { before.append(try await devin.members(of: id, asOf: moment).members) }
            #expect(before[0].filter { $0.state == "expired" }.count == 2)
            let report = try await ProjectionRebuild(client: server.db, logger: Logger(label: "rebuild-test")).run(.membership)
            #expect(report.events > 0)
            for (moment, expected) in zip(moments, before) {
                #expect(try await devin.members(of: id, asOf: moment).members == expected, "as of \(String(describing: moment))")
            }
            let audit = try await ViewAudit(
                client: server.db, store: EventStore(client: server.db, logger: Logger(label: "audit")), logger: Logger(label: "audit")
            ).run()
            #expect(audit.consistent, "\(audit.details)")
        }
    }

    @Test("erasing an account whose grant expired leaves the expiry's evidence verifying")
    func erasureAfterExpiry() async throws {
        try await LiveServer.run { server in
            let (devin, alice) = (server.client("devin"), server.client("alice"))
            let auditor = server.client("auditor", roles: ["auditor"])
            let officer = server.client("officer", roles: ["privacy"])
            let (id, _) = try await Self.start(devin, "erased")
            let person = SimulatedPerson(collaborationId: id, devices: 1)
            _ = try await devin.updateParticipants(
                addedWithWindows: [IdentityWindow(rootHash: person.rootHashData, notAfter: Date().addingTimeInterval(600))], in: id)
            guard case .granted(_, _, let granted) = try await verify(alice, person, in: id) else {
                Issue.record("not granted")
                return
            }
            _ = try await TestWindows.endIn(3, devin, id, [person])
            try await waitUntil(timeout: .seconds(30), "the expiry") { try await Self.expiries(devin, id).count == 1 }
            let expiry = try #require(try await Self.expiries(devin, id).first).position
            try await waitUntil(timeout: .seconds(20), "a checkpoint covering the expiry") {
                (try? await auditor.evidence(position: expiry)) != nil
            }
            let key = try NoteVerifier(try await auditor.logKey())
            let saved = try await auditor.evidence(position: expiry)
            let grant = try await auditor.evidence(position: granted)
            #expect(try EvidenceVerifier.verify(saved, key: key).position == expiry)
            _ = try await officer.erasePersonalData(account: "alice", reason: "TICKET-41")
            let now = try await auditor.evidence(position: expiry)
            #expect(try EvidenceVerifier.verify(now, key: key).position == expiry)
            #expect(try EvidenceVerifier.verify(saved, key: key).position == expiry)
            #expect(try EvidenceVerifier.verify(grant, key: key).position == granted)
            // The grant's evidence carries the window it was granted under; the expiry's, when it ended.
            #expect(grant.event.data.contains("\"notAfter\":") && saved.event.data.contains("\"dueAt\":"), "\(grant.event.data)")
            let json = String(decoding: try JSONEncoder().encode(now), as: UTF8.self)
            #expect(!json.contains("\"alice\""), "the evidence names alice after her erasure")
        }
    }
}
