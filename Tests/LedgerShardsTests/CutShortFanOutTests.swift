import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import PostgresNIO
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 66: a write of every shard cut short by a shard whose PostgreSQL stopped answers what
/// each shard did (503 `cut_short`, `Retry-After`, `shards`), and a retry once it is back
/// finishes it (docs/SCALING.md, "What a fan-out cut short answers").
@Suite("Fan-outs cut short by a lost shard")
struct CutShortFanOutTests {
    typealias Step = @Sendable () async throws -> Void

    /// `body` with `ledger serve` on two shards, shard 1 a PostgreSQL cluster of its own that
    /// `stop` stops (until the router sees it down) and `start` starts again (until it sees it up).
    static func withShard1(
        configuration: LedgerConfiguration = .testing(), _ body: @Sendable (LiveShards, _ stop: Step, _ start: Step) async throws -> Void
    ) async throws {
        try await withOwnCluster(logger: LiveShards.logger) { ownOwner, own in
            let shards = [try await TestCluster.shared.makeDatabase(), ownOwner]
            try await LiveShards.run(shards: shards, configuration: configuration) { live in
                // Seen by this server's router: a read of shard 1 answered (404, an id no one started)
                // or refused by the router itself (503 naming the shard, which only a shard seen down
                // gets: a read that reached shard 1 as it went away fails with the shard's own 503
                // before the router has seen it down). `/metrics`' gauge is the test process's.
                var unknown = UUID().uuidString.lowercased()
                while live.shard(of: unknown) != 1 { unknown = UUID().uuidString.lowercased() }
                let read = try await live.request("GET", "v1/collaborations/\(unknown)", as: "watcher")
                @Sendable func seen(_ up: Bool) async throws {
                    try await waitUntil(timeout: .seconds(120), interval: .milliseconds(200), "shard 1 seen \(up ? "up" : "down")") {
                        guard let (body, response) = try? await TestHTTP.data(for: read) else { return false }
                        if up { return response.statusCode == 404 }
                        return response.statusCode == 503 && String(decoding: body, as: UTF8.self).contains("shard 1, which holds this")
                    }
                }
                try await seen(true)
                try await body(
                    live,
                    {
                        try await own.stopImmediately()
                        try await seen(false)
                    },
                    {
                        try await own.startAgain()
                        try await seen(true)
                    })
            }
        }
    }

    static func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) { try await TestHTTP.data(for: request) }

    @Test("an erasure with shard 1 stopped: 503 naming shard 0's erasure and position; back, a retry names both")
    func erasure() async throws {
        try await Self.withShard1 { live, stop, start in
            // Erin's values on both shards.
            let erin = live.client("erin")
            var held: Set<Int> = []
            while held.count < 2 {
                let id = try await erin.prepareCollaboration(
                    localIdentifier: "e\(held.count)", title: "Erin's", initiator: Initiator(handle: "erin@example.com")
                ).identifier
                held.insert(live.shard(of: id))
            }
            try await stop()

            let erase = #"{"account":"erin","reason":"TICKET-66"}"#
            let (body, cut) = try await Self.send(
                try await live.request("POST", "v1/privacy/erasures", as: "p", roles: ["privacy"], body: erase))
            let text = String(decoding: body, as: UTF8.self)
            #expect(cut.statusCode == 503 && Int(cut.value(forHTTPHeaderField: "Retry-After") ?? "") != nil, "\(text)")
            let answer = try APIJSON.decoder().decode(CutShort.self, from: body)
            #expect(answer.error.code == "cut_short" && answer.shards.map(\.shard) == [0, 1], "\(text)")
            let done = try #require(answer.shards.first?.erasure, "\(text)")
            #expect(answer.shards[0].completed && done.held && done.erasedAt != nil && done.values.contains { $0.kind == "title" })
            #expect(!answer.shards[1].completed && answer.shards[1].error?.code == "database_unavailable", "\(text)")
            // The position named is shard 0's erasure.
            let position = try #require(done.position)
            let type = try await withClient(live.shards[0]) { client in
                try await client.query("SELECT event_type FROM ledger_events WHERE position = \(position)").decode(String.self).reduce("") {
                    $1
                }
            }
            #expect(type == "PersonalDataErased")
            // The SDK throws the same answer with each shard's part.
            do {
                _ = try await live.client("p", roles: ["privacy"]).erasePersonalData(account: "erin", reason: "TICKET-66")
                Issue.record("a cut-short erasure did not throw")
            } catch let refusal as LedgerError {
                #expect(refusal.code == "cut_short" && refusal.shards?.map(\.shard) == [0, 1], "\(refusal)")
                #expect(refusal.shards?[1].error?.code == "database_unavailable", "\(refusal)")
            }

            // Back: the retry finishes it, naming every shard; shard 0 answers held: false, as it
            // keeps nothing that links erin to the erasure it did (SPEC "Nothing links the person back").
            try await start()
            let (again, retried) = try await Self.send(
                try await live.request("POST", "v1/privacy/erasures", as: "p", roles: ["privacy"], body: erase))
            #expect(retried.statusCode == 200, "\(String(decoding: again, as: UTF8.self))")
            let whole = try APIJSON.decoder().decode(Erasure.self, from: again)
            #expect(whole.held && whole.shards?.map(\.shard) == [0, 1])
            #expect(whole.shards?[0].held == false && whole.shards?[1].held == true && whole.shards?[1].position != nil)
            let (_, export) = try await Self.send(
                try await live.request("GET", "v1/privacy/export?account=erin", as: "p", roles: ["privacy"]))
            #expect(export.statusCode == 404, "nothing of erin left on either shard")
        }
    }

    @Test("a webhook registered or deleted with shard 1 stopped: 503 naming each shard; back, retries finish")
    func webhooks() async throws {
        try await Self.withShard1(configuration: .testing { $0.webhooksAllowPrivate = true }) { live, stop, start in
            let devin = live.client("devin")
            let hook = #"{"url":"http://127.0.0.1:9/hook"}"#
            let kept = try await devin.registerWebhook(url: "http://127.0.0.1:9/kept")
            try await stop()

            let (body, cut) = try await Self.send(try await live.request("POST", "v1/webhooks", as: "devin", body: hook))
            #expect(cut.statusCode == 503 && cut.value(forHTTPHeaderField: "Retry-After") != nil)
            let registration = try APIJSON.decoder().decode(CutShort.self, from: body)
            #expect(registration.shards.map(\.completed) == [false, false], "not asked while shard 1 is down")
            #expect(registration.shards.map(\.error?.code) == ["cut_short", "database_unavailable"])

            let (deleted, deletion) = try await Self.send(try await live.request("DELETE", "v1/webhooks/\(kept.id)", as: "devin"))
            #expect(deletion.statusCode == 503)
            let parts = try APIJSON.decoder().decode(CutShort.self, from: deleted).shards
            #expect(parts[0].completed && parts[0].deleted == true && !parts[1].completed)

            try await start()
            let registered = try await devin.registerWebhook(url: "http://127.0.0.1:9/hook")
            try await devin.deleteWebhook(kept.id)  // shard 1 still held it: 204
            #expect(try await devin.webhooks().map(\.id) == [registered.id, registered.id], "the new one on both shards, alone")
        }
    }
}
