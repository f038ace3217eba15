import Foundation
import LedgerApp
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerShards
import LedgerTestSupport
import Logging
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// SPEC "Writes past one primary", issue 49: with one shard's PostgreSQL stopped, the other
/// shard's collaborations keep working, and the stopped shard's answer 503 with `Retry-After`,
/// never a wrong answer; once it is back, its collaborations work again with nothing lost.
@Suite("Losing a shard")
struct ShardLossTests {
    /// One shard's PostgreSQL stopped: the other's commands, reads and starts work; the stopped
    /// one's answer 503 with Retry-After; back, nothing is lost.
    @Test("one shard's PostgreSQL stopped: the other works, the stopped one's answer 503 Retry-After; none lost")
    func oneShardStopped() async throws {
        try await withOwnCluster(logger: LiveShards.logger) { ownOwner, own in
            let shards = [try await TestCluster.shared.makeDatabase(), ownOwner]
            try await LiveShards.run(shards: shards) { live in
                let devin = live.client("devin")
                // Collaborations on both shards, each with one identity added.
                var on: [[(id: String, person: SimulatedPerson)]] = [[], []]
                for n in 0..<64 where n < 8 || on.contains(where: \.isEmpty) {
                    let id = try await devin.prepareCollaboration(
                        localIdentifier: "l\(n)", title: "Loss \(n)", initiator: Initiator(handle: "devin@example.com")
                    ).identifier
                    let person = SimulatedPerson(collaborationId: id, devices: 1)
                    _ = try await devin.updateParticipants(added: [person.rootHashData], in: id)
                    on[live.shard(of: id)].append((id, person))
                }
                try #require(on.allSatisfy { !$0.isEmpty })

                try await own.stopImmediately()
                // Until the router has seen it down, a request to it waits on the pool.
                try await waitUntil(timeout: .seconds(30), "shard 1 seen down") {
                    let (body, _) = try await TestHTTP.data(from: live.baseURL.appendingPathComponent("metrics"))
                    return String(decoding: body, as: UTF8.self).contains(#"ledger_shard_available{shard="1"} 0"#)
                }

                // The running shard: commands, reads and a start routed to it by its key.
                for (id, person) in on[0] {
                    let added = SimulatedPerson(collaborationId: id, devices: 1)
                    let update = try await devin.updateParticipants(added: [added.rootHashData], in: id)
                    let members = try await devin.members(of: id, minPosition: update.position).members.map(\.rootHash)
                    #expect(Set(members) == Set([person, added].map { $0.rootHashData.base64EncodedString() }))
                }
                let keyOnRunning = Self.key(placedOn: 0, live)
                _ = try await devin.prepareCollaboration(
                    localIdentifier: "running", title: "Running", initiator: Initiator(handle: "devin@example.com"),
                    idempotencyKey: keyOnRunning)

                // The stopped shard: 503 with Retry-After, for commands, reads, challenges and starts,
                // and for a read that covers every shard (never an answer from part of them).
                let start = #"{"localIdentifier":"stopped","title":"Stopped","initiatorHandle":"devin@example.com"}"#
                var startOnStopped = try await live.request("POST", "v1/collaborations", as: "devin", body: start)
                startOnStopped.setValue(Self.key(placedOn: 1, live), forHTTPHeaderField: "Idempotency-Key")
                let id = on[1][0].id
                let added = SimulatedPerson(collaborationId: id, devices: 1).rootHashData.base64EncodedString()
                for request in [
                    try await live.request(
                        "POST", "v1/collaborations/\(id)/participants", as: "devin", body: #"{"added":[{"rootHash":"\#(added)"}]}"#),
                    try await live.request("GET", "v1/collaborations/\(id)/members", as: "devin"),
                    try await live.request("GET", "v1/accounts/me/collaborations", as: "devin"),
                    try await live.request("POST", "v1/challenges", as: "alice", body: #"{"collaborationId":"\#(id)"}"#),
                    startOnStopped,
                ] {
                    let (body, response) = try await TestHTTP.data(for: request)
                    let what = "\(request.httpMethod ?? "") \(request.url?.path ?? ""): \(String(decoding: body, as: UTF8.self))"
                    #expect(response.statusCode == 503, "\(what)")
                    #expect(Int(response.value(forHTTPHeaderField: "Retry-After") ?? "") != nil, "\(what)")
                }

                // Back: the stopped shard's collaborations answer again, as they were.
                try await own.startAgain()
                try await waitUntil(timeout: .seconds(60), "the stopped shard answers again") {
                    (try? await devin.members(of: id)) != nil
                }
                for (id, person) in on[1] {
                    let members = try await devin.members(of: id).members.map(\.rootHash)
                    #expect(members == [person.rootHashData.base64EncodedString()])
                }
                #expect(try await live.collaborations()[1].count == on[1].count, "the refused start appended nothing")
            }
        }
    }

    /// The top log's PostgreSQL stopped: /tlog/ answers 503 with Retry-After while the shards'
    /// commands, reads and own logs go on; back, the top log records what it missed.
    @Test("the top log's PostgreSQL stopped: /tlog/ 503 while the shards go on; back, the top log catches up")
    func topStopped() async throws {
        try await withOwnCluster(logger: LiveShards.logger) { topOwner, own in
            let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
            let signer = try NoteSigner(name: "top-loss.test/ledger")
            let keys = try RoleServices.ShardLogs(signer: signer, count: 2).shards.map(\.verifier)
            try await LiveShards.run(shards: shards, top: topOwner, signer: signer) { live in
                let devin = live.client("devin")
                let top = live.baseURL.appendingPathComponent("tlog/checkpoint")
                try await waitUntil(timeout: .seconds(30), "the top log's first checkpoint") {
                    try await TestHTTP.data(from: top).1.statusCode == 200
                }
                try await own.stopImmediately()
                try await waitUntil(timeout: .seconds(30), "the top log's database seen down") {
                    let (body, _) = try await TestHTTP.data(from: live.baseURL.appendingPathComponent("metrics"))
                    return String(decoding: body, as: UTF8.self).contains(#"ledger_shard_available{shard="top"} 0"#)
                }
                let (_, refused) = try await TestHTTP.data(from: top)
                #expect(refused.statusCode == 503 && Int(refused.value(forHTTPHeaderField: "Retry-After") ?? "") != nil)

                // The shards go on: starts, adds, reads, and each shard's own checkpoints.
                for n in 0..<8 {
                    let id = try await devin.prepareCollaboration(
                        localIdentifier: "t\(n)", title: "Top down \(n)", initiator: Initiator(handle: "devin@example.com")
                    ).identifier
                    let person = SimulatedPerson(collaborationId: id, devices: 1)
                    let update = try await devin.updateParticipants(added: [person.rootHashData], in: id)
                    #expect(try await devin.members(of: id, minPosition: update.position).members.count == 1)
                }
                let events = [try await live.events(on: 0), try await live.events(on: 1)]
                for index in 0..<2 {
                    let url = live.baseURL.appendingPathComponent("tlog/shard/\(index)/checkpoint")
                    try await waitUntil(timeout: .seconds(30), "shard \(index)'s own checkpoint of its \(events[index]) events") {
                        let (body, response) = try await TestHTTP.data(from: url)
                        let text = String(decoding: body, as: UTF8.self)
                        return response.statusCode == 200 && (try? Checkpoint.open(text, verifier: keys[index]).size) == events[index]
                    }
                }

                // Back: the top log records each shard's latest checkpoint.
                try await own.startAgain()
                try await waitUntil(timeout: .seconds(90), "the top log recording what it missed") {
                    let recorded = try await TopLogTests.recorded(live)
                    return (0..<2).allSatisfy { shard in recorded.contains { $0.shard == shard && $0.size == events[shard] } }
                }
            }
        }
    }

    /// An idempotency key whose start the map places on shard `index`.
    static func key(placedOn index: Int, _ live: LiveShards) -> String {
        var n = 0
        while live.shard(of: "key-\(n)") != index { n += 1 }
        return "key-\(n)"
    }
}
