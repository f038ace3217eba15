import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the console reads, on two shards (issue 49): the collaborations list across shards, the
/// log's endpoints answered by the top log, its status with each shard's, and the console itself
/// in a real browser (`ConsoleScenario`, as `ConsoleTests` runs it on one database).
@Suite("The console on shards")
struct ShardConsoleTests {
    /// The collaborations list reads every shard, pages across them, each entry named by its shard;
    /// /v1/log is the top log's; its status has each shard's.
    @Test("the collaborations list reads and pages every shard, naming each; /v1/log is the top log's")
    func reads() async throws {
        let signer = try NoteSigner(name: "console.test/ledger")
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        try await LiveShards.run(shards: shards, signer: signer) { live in
            let devin = live.client("devin")
            var started: [String: Int64] = [:]
            for n in 0..<12 {
                let receipt = try await devin.prepareCollaboration(
                    localIdentifier: "plan \(n)", title: n % 3 == 0 ? "Trip \(n)" : "Budget \(n)",
                    initiator: Initiator(handle: "devin@example.com"))
                started[receipt.identifier] = receipt.position
            }
            #expect(Set(started.keys.map(live.shard(of:))) == [0, 1], "12 starts on a random shard each use both")
            for (id, position) in started { _ = try await devin.members(of: id, minPosition: position) }

            // Pages of 5 over 12 collaborations: every one once, shard 0's before shard 1's, each named by its shard.
            var (listed, cursor, pages): ([CollaborationList.Entry], String?, Int) = ([], nil, 0)
            repeat {
                let (page, raw) = try await Self.list(live, as: "devin", query: ["limit": "5", "cursor": cursor])
                #expect(page.collaborations.count == 5 || page.nextCursor == nil, "a page is short only at the end")
                #expect(raw["position"] == nil, "a position is one shard's: the list across shards has none")
                listed += page.collaborations
                (cursor, pages) = (page.nextCursor, pages + 1)
            } while cursor != nil && pages < 10
            #expect(listed.count == 12 && Set(listed.map(\.collaborationId)) == Set(started.keys))
            #expect(listed.allSatisfy { $0.shard == live.shard(of: $0.collaborationId) })
            #expect(listed.map { $0.shard ?? -1 } == listed.map { $0.shard ?? -1 }.sorted(), "shard after shard")
            // A search reads every shard too; another account sees none of them.
            let (trips, _) = try await Self.list(live, as: "devin", query: ["q": "Trip"])
            #expect(Set(trips.collaborations.map(\.title)) == ["Trip 0", "Trip 3", "Trip 6", "Trip 9"])
            #expect(try await Self.list(live, as: "stranger", query: [:]).page.collaborations.isEmpty)
            for bad in [["cursor": "2."], ["cursor": "x"], ["minPosition": "1"], ["limit": "0"]] {
                let (_, response) = try await TestHTTP.data(
                    for: try await live.request("GET", Self.path("v1/collaborations", bad), as: "devin"))
                #expect(response.statusCode == 400, "\(bad)")
            }

            // /v1/log is the top log's: the deployment's key and origin, its entries the shards' checkpoints.
            #expect(try await devin.logKey() == signer.verifier.text)
            try await waitUntil(timeout: .seconds(60), "the top log to record both shards") {
                (try? await devin.logStatus()).map { $0.checkpoint != nil && $0.head >= 2 } ?? false
            }
            let note = try await devin.checkpoint()
            let checkpoint = try Checkpoint(text: try SignedNote.parse(note).text)
            #expect(checkpoint.origin == "console.test/ledger")
            _ = try SignedNote.open(note, verifier: signer.verifier)  // the top checkpoint opens with the deployment's key
            let consistency = try await devin.consistencyProof(from: 1, to: checkpoint.size)
            #expect(consistency.to == checkpoint.size)

            // Its status: the top log's head and checkpoint, each shard's own status, projections named by shard.
            let status = try await devin.logStatus()
            let each = try #require(status.shards)
            #expect(each.map(\.shard) == [0, 1])
            for part in each {
                let index = try #require(part.shard)
                #expect(part.head == (try await live.events(on: index)), "shard \(index)'s head is its own log's")
                #expect(part.projections.allSatisfy { $0.shard == index })
            }
            #expect(status.projections.count == each.reduce(0) { $0 + $1.projections.count })
            #expect(status.expiry.running == each.allSatisfy(\.expiry.running))
            #expect(status.checkpoint?.size == checkpoint.size || (status.checkpoint?.size ?? 0) > checkpoint.size)
        }
    }

    @Test("the console in a real browser against two shards: every page as on one database, no console error")
    func console() async throws {
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        let signer = try NoteSigner(name: "console.test/ledger")
        try await LiveShards.run(shards: shards, configuration: .testing { $0.index = true }, signer: signer) { live in
            let run = try await ConsoleScenario.run(
                baseURL: live.baseURL, authority: live.authority, logKey: signer.verifier.text, shards: true,
                screenshots: "console-screenshots-shards")
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("ok - "), "\(run.output)")
        }
    }

    /// `GET /v1/collaborations` as `account`: the page, and its JSON as sent.
    static func list(_ live: LiveShards, as account: String, query: [String: String?]) async throws -> (
        page: CollaborationList, raw: [String: Any]
    ) {
        let (body, response) = try await TestHTTP.data(for: try await live.request("GET", path("v1/collaborations", query), as: account))
        #expect(response.statusCode == 200, "\(String(decoding: body, as: UTF8.self))")
        let raw = try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
        return (try APIJSON.decoder().decode(CollaborationList.self, from: body), raw)
    }

    static func path(_ path: String, _ query: [String: String?]) -> String {
        var components = URLComponents()
        components.path = path
        let items = query.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }
        components.queryItems = items.isEmpty ? nil : items
        return components.string!
    }
}
