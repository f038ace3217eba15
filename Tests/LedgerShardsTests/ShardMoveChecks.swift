import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import Synchronization
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `ShardMoveTests` checks once `ledger serve` runs on the three shards a move made: shard 0
/// (a) the partition's old shard, shard 2 the new one (a copy of a at `head`), shard 1 untouched.
struct ShardMoveChecks {
    let live: LiveShards
    /// devin's 24 collaborations, those alice was granted, the one whose window came due.
    let ids: [String]
    let granted: [String]
    let window: String
    /// Each collaboration's history (position and type) before the move.
    let histories: [String: [String]]
    let head: Int64
    /// A feed cursor of the two shards before the move.
    let cursor: String
    let signer: NoteSigner
    /// Receives devin's webhook of every collaboration, refused until now.
    let receiver: WebhookReceiver

    func run() async throws {
        let (devin, alice, auditor) = (live.client("devin"), live.client("alice"), live.client("auditor", roles: ["auditor"]))
        let moved = ids.filter { live.shard(of: $0) == 2 }
        #expect(!moved.isEmpty && moved.contains(window))
        // Each history as it was; the window's collaboration gains its expiry, once, from shard 2.
        try await waitUntil(timeout: .seconds(60), "the window's AccessExpired") {
            try await ShardMoveTests.all(devin.allHistory(of: window)).contains { $0.type == "AccessExpired" }
        }
        for id in ids {
            let now = try await ShardMoveTests.all(devin.allHistory(of: id)).map { "\($0.position) \($0.type)" }
            let was = histories[id] ?? []
            #expect(Array(now.prefix(was.count)) == was, "\(id)'s history changed")
            if id == window {
                let expiry = now.dropFirst(was.count)
                #expect(expiry.count == 1 && expiry.first?.hasSuffix(" AccessExpired") == true, "\(expiry)")
                let position = Int64(expiry.first?.split(separator: " ").first ?? "") ?? 0
                #expect(position > head, "expired after the move, by the new shard (at \(position), the copy at \(head))")
            } else {
                #expect(now.count == was.count, "\(id): \(now.dropFirst(was.count))")
            }
        }
        // A command on a moved collaboration continues the copied log on shard 2.
        let person = SimulatedPerson(collaborationId: moved[0], devices: 1)
        let added = try await devin.updateParticipants(added: [person.rootHashData], in: moved[0])
        #expect(added.position > head)
        for (index, shard) in live.shards.enumerated() where index != 1 {
            let written = try await ShardMoveTests.written(on: shard, after: head)
            #expect(written.allSatisfy { live.shard(of: $0) == index }, "shard \(index) wrote what another holds: \(written)")
        }
        #expect(try await ShardMoveTests.written(on: live.shards[2], after: head).contains(moved[0]))
        try await lists(devin, alice, auditor)
        try await cursorOfAnotherShard()
        try await webhook(devin)
        // A grant made on shard 0 before the move, proved from shard 2 through both levels.
        let grant = try #require(
            try await ShardMoveTests.all(devin.allHistory(of: moved[0])).first { $0.type == "AccessGranted" })
        let evidence = try await ShardEvidenceTests.evidence(auditor, position: grant.position, shard: 2)
        let report = try EvidenceVerifier.verify(evidence, key: signer.verifier)
        #expect(report.shard == 2 && report.position == grant.position && report.deviceProofChecked)
        try await logVerify()
        // A rebuild replays the whole log, the other shard's past included, and folds what its
        // shard holds; the views' audit folds the log alike and finds them equal.
        for index in [0, 2] {
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
            environment["LEDGER_DATABASE_URL"] = live.shards[index].url(revealPassword: true)
            for command in [["projections", "verify"], ["projections", "rebuild", "all"], ["projections", "verify"]] {
                let run = try await ProcessRunner.run(ledgerBinary(), command, environment: environment)
                #expect(run.status == 0, "shard \(index), \(command): \(run.output)")
            }
        }
        try await lists(devin, alice, auditor)
        // Last (it starts a sentinel collaboration on each shard): the feed from every shard's
        // start, each event once, from the shard that holds it.
        var events = 0
        for id in ids { events += try await ShardMoveTests.all(devin.allHistory(of: id)).count }
        let feed = try await ShardFeedTests.events(live, of: ids, after: "0,0,0", count: events)
        #expect(feed.allSatisfy { $0.shard == live.shard(of: $0.entry.collaborationId) })
        // The cursor from before the move: shard 2 resumes from shard 0's position, and every
        // event after the cursor comes once (a moved collaboration's, from shard 2).
        let positions = cursor.split(separator: ",").compactMap { Int64($0) }
        let after = feed.filter { $0.entry.position > positions[live.shard(of: $0.entry.collaborationId) == 1 ? 1 : 0] }
        let resumed = try await ShardFeedTests.events(live, of: ids, after: cursor, count: after.count)
        let place = { (event: FeedEvent) in "\(event.shard ?? -1)@\(event.entry.position)" }
        #expect(resumed.map(place).sorted() == after.map(place).sorted())
    }

    /// The webhook's backlog, from before and after the move: every event of devin's
    /// collaborations delivered once (by the shard that holds it, though the new shard's copy of
    /// the webhook came with the backlog of the whole copied log).
    func webhook(_ devin: LedgerClient) async throws {
        var events: Set<String> = []
        for id in ids { for entry in try await ShardMoveTests.all(devin.allHistory(of: id)) { events.insert("\(id)#\(entry.version)") } }
        let (expected, receiver, ids) = (events, receiver, ids)
        let delivered: @Sendable () -> [WebhookReceiver.Delivery] = {
            receiver.accepted("every").filter { ids.contains($0.entry.collaborationId) }
        }
        try await waitUntil(timeout: .seconds(90), "the webhook's backlog delivered") {
            Set(delivered().map { "\($0.entry.collaborationId)#\($0.entry.version)" }) == expected
        }
        let each = delivered()
        #expect(each.count == expected.count, "\(each.count - expected.count) delivered twice")
        #expect(each.allSatisfy { $0.entry.shard == live.shard(of: $0.entry.collaborationId) })
    }

    /// "My collaborations", the console's list and the access audit: each collaboration once, named
    /// by the shard that holds it.
    func lists(_ devin: LedgerClient, _ alice: LedgerClient, _ auditor: LedgerClient) async throws {
        let owned = try await devin.myCollaborations().collaborations.map(\.collaborationId)
        #expect(owned.count == ids.count && Set(owned) == Set(ids), "\(owned.sorted()) against \(ids.sorted())")
        let members = try await alice.myCollaborations().collaborations.map(\.collaborationId)
        // The window's collaboration is no longer hers once it expired.
        let member = granted.filter { $0 != window }
        #expect(members.count == member.count && Set(members) == Set(member), "\(members.sorted()) against \(member.sorted())")
        let records = try await ShardMoveTests.all(auditor.allAccessRecords()).filter { $0.change == "granted" }
        #expect(records.map(\.collaborationId).sorted() == granted.sorted())
        #expect(records.allSatisfy { $0.shard == live.shard(of: $0.collaborationId) })
        let (console, _) = try await ShardConsoleTests.list(live, as: "devin", query: ["limit": "100"])
        #expect(console.nextCursor == nil)
        let listed = console.collaborations
        #expect(listed.count == ids.count && Set(listed.map(\.collaborationId)) == Set(ids), "\(listed.map(\.collaborationId))")
        #expect(listed.allSatisfy { $0.shard == live.shard(of: $0.collaborationId) })
    }

    /// A list's cursor is its shard's: shard 0's (`0.c`) named as shard 2's (`2.c`) is refused,
    /// though shard 2 began as a copy of shard 0, cursor key and all (the move gave it its own).
    func cursorOfAnotherShard() async throws {
        let path = { (cursor: String) in ShardConsoleTests.path("v1/collaborations", ["limit": "1", "cursor": cursor]) }
        let cursor = try #require(try await ShardConsoleTests.list(live, as: "devin", query: ["limit": "1"]).page.nextCursor)
        try #require(cursor.hasPrefix("0."), "\(cursor)")
        _ = try await ShardConsoleTests.list(live, as: "devin", query: ["limit": "1", "cursor": cursor])  // 200 on its own shard
        let (body, response) = try await TestHTTP.data(for: try await live.request("GET", path("2" + cursor.dropFirst()), as: "devin"))
        let answer = String(decoding: body, as: UTF8.self)
        #expect(response.statusCode == 400 && answer.contains("\"invalid_cursor\""), "\(response.statusCode) \(answer)")
    }

    /// `ledger log verify --url --shards` over the three shards, from the top checkpoint.
    func logVerify() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("move-\(UUID().uuidString.prefix(8)).checkpoint")
        defer { try? FileManager.default.removeItem(at: file) }
        let last = Mutex("")
        try await waitUntil(timeout: .seconds(60), interval: .milliseconds(500), "the top log recording shard 2") {
            let note = try await TestHTTP.data(from: live.baseURL.appendingPathComponent("tlog/checkpoint")).0
            try note.write(to: file)
            let run = try await ProcessRunner.run(
                ledgerBinary(),
                [
                    "log", "verify", "--url", live.baseURL.absoluteString, "--checkpoint", file.path, "--key", signer.verifier.text,
                    "--shards",
                ])
            last.withLock { $0 = run.output }
            return run.status == 0 && run.output.contains("shard 2: OK")
        }
        let output = last.withLock { $0 }
        #expect(output.contains("shard 0: OK") && output.contains("shard 1: OK"), "\(output)")
    }
}
