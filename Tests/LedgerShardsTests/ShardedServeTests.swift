import Foundation
import LedgerApp
import LedgerClient
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTestSupport
import LedgerTokens
import Logging
import PostgresNIO
import Testing

@testable import LedgerShards

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ledger serve` on two shards (issue 49), through the SDK over the real HTTP server: every
/// collaboration's events on exactly the shard PL/Proxy's definition places it on, commands,
/// proofs and reads routed there, retries of a start meeting their first append, and the
/// endpoints that need every shard refused, not answered from one.
@Suite("Serving on shards")
struct ShardedServeTests {
    /// Two migrated shards of the test cluster, and `ledger serve` on them.
    static func run(_ body: @Sendable (LiveShards) async throws -> Void) async throws {
        try await LiveShards.run(shards: [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()], body)
    }

    @Test("starts, adds, proofs and reads routed by the map: each collaboration on its shard, both shards used")
    func routed() async throws {
        try await Self.run { live in
            let (devin, alice) = (live.client("devin"), live.client("alice"))
            var started: [(id: String, person: SimulatedPerson)] = []
            for n in 0..<24 {
                let id = try await devin.prepareCollaboration(
                    localIdentifier: "trip \(n)", title: "Trip \(n)", initiator: Initiator(handle: "devin@example.com")
                ).identifier
                let person = SimulatedPerson(collaborationId: id, devices: 1)
                _ = try await devin.updateParticipants(added: [person.rootHashData], in: id)
                started.append((id, person))
            }
            // Proofs, three on each shard: the challenge goes by its body's collaboration id, the proof by its path.
            let chosen = started.filter { live.shard(of: $0.id) == 0 }.prefix(3) + started.filter { live.shard(of: $0.id) == 1 }.prefix(3)
            #expect(chosen.count == 6, "24 starts sent to a random shard each put three at least on each")
            for (id, person) in chosen {
                guard case .granted(_, let account, let position) = try await verify(alice, person, in: id) else {
                    Issue.record("\(id): no grant")
                    continue
                }
                #expect(account == "alice")
                let members = try await devin.members(of: id, minPosition: position).members
                #expect(members.contains { $0.rootHash == person.rootHashData.base64EncodedString() && $0.state == "granted" })
            }
            let held = try await live.collaborations()
            for (id, _) in started {
                #expect(held[live.shard(of: id)].contains(id), "\(id) is not on its shard")
                #expect(held.filter { $0.contains(id) }.count == 1, "\(id) is on \(held.filter { $0.contains(id) }.count) shards")
            }
            #expect(held.allSatisfy { !$0.isEmpty }, "24 collaborations over 3/8 and 5/8 of the partitions use both shards")
            // "My collaborations" reads every shard: the owner's 24, the member's 6 once granted.
            let owned = try await devin.myCollaborations().collaborations
            #expect(Set(owned.map(\.collaborationId)) == Set(started.map(\.id)) && owned.count == 24)
            #expect(owned.allSatisfy { $0.role == "owner" })
            let proved = Set(chosen.map(\.id))
            try await waitUntil("alice's six collaborations in her list") {
                try await Set(alice.myCollaborations().collaborations.map(\.collaborationId)) == proved
            }
            #expect(try await alice.myCollaborations().collaborations.allSatisfy { $0.role == "member" })
            try await Self.audit(live, grants: chosen.map(\.id))
        }
    }

    /// The access audit covers both shards: the six grants, each named by its shard, a page of
    /// four then one of two; the CSV export with its shard column; one collaboration's audit from
    /// its shard alone; a cursor that is not one refused.
    static func audit(_ live: LiveShards, grants: [String]) async throws {
        let auditor = live.client("auditor", roles: ["auditor"])
        try await waitUntil("the six grants in the access history") { try await auditor.auditAccess(limit: 100).records.count == 6 }
        let first = try await auditor.auditAccess(limit: 4)
        let cursor: String = try #require(first.nextCursor)
        let second = try await auditor.auditAccess(limit: 4, cursor: cursor)
        let records = first.records + second.records
        #expect(first.records.count == 4 && second.records.count == 2 && second.nextCursor == nil)
        #expect(records.map(\.collaborationId).sorted() == grants.sorted())
        #expect(records.allSatisfy { $0.change == "granted" && $0.accountId == "alice" && $0.shard == live.shard(of: $0.collaborationId) })
        #expect(records.map { $0.shard ?? -1 } == records.map { $0.shard ?? -1 }.sorted(), "shard after shard")
        let (csv, response) = try await TestHTTP.data(
            for: try await live.request("GET", "v1/audit/access?format=csv", as: "auditor", roles: ["auditor"]))
        #expect(response.statusCode == 200)
        let rows = String(decoding: csv, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.first == "position,time,collaborationId,accountId,rootHash,change,reason,actor,dueAt,shard")
        #expect(rows.dropFirst().map { $0.split(separator: ",").last.map(String.init) ?? "" } == records.map { String($0.shard!) })
        let one = try await auditor.auditAccess(collaboration: grants[4]).records
        #expect(one.map(\.collaborationId) == [grants[4]] && one.first?.shard == live.shard(of: grants[4]))
        for cursor in ["2.", "01.", "x", ""] {
            let refused = await rejection { _ = try await auditor.auditAccess(cursor: cursor) }
            #expect(refused?.code == "invalid_cursor", "cursor \(cursor)")
        }
        let notAuditor = await rejection { _ = try await live.client("devin").auditAccess() }
        #expect(notAuditor?.status == 403)
    }

    @Test("a start retried with its Idempotency-Key meets its first append on its shard; another start refused")
    func idempotentStart() async throws {
        try await Self.run { live in
            let devin = live.client("devin")
            for n in 0..<6 {
                let key = "retry-\(n)-\(UUID())"
                let first = try await devin.prepareCollaboration(
                    localIdentifier: "r\(n)", title: "Retry \(n)", initiator: Initiator(handle: "d@example.com"), idempotencyKey: key)
                let again = try await devin.prepareCollaboration(
                    localIdentifier: "r\(n)", title: "Retry \(n)", initiator: Initiator(handle: "d@example.com"), idempotencyKey: key)
                #expect(again.identifier == first.identifier)
                #expect(again.position == first.position)
                let other = await rejection {
                    _ = try await devin.prepareCollaboration(
                        localIdentifier: "r\(n)", title: "Another", initiator: Initiator(handle: "d@example.com"), idempotencyKey: key)
                }
                #expect(other?.code == "idempotency_key_reused")
            }
            let held = try await live.collaborations()
            #expect(held.map(\.count).reduce(0, +) == 6, "one collaboration a key, on one shard")
        }
    }

    /// An export and an erasure cover every shard: each exports its own, then erases the account's
    /// values and pseudonym and logs it; a retry finds nothing held.
    @Test("an export and an erasure cover every shard: each exports, erases, logs its own; a retry finds none")
    func erasure() async throws {
        try await Self.run { live in
            let devin = live.client("devin")
            var ids: [String] = []
            while Set(ids.map { live.shard(of: $0) }).count < 2 {
                ids.append(
                    try await devin.prepareCollaboration(
                        localIdentifier: "e\(ids.count)", title: "Erase \(ids.count)", initiator: Initiator(handle: "devin@example.com")
                    ).identifier)
            }
            func held(_ table: String, where condition: String) async throws -> [Int64] {
                var counts: [Int64] = []
                for shard in live.shards {
                    counts.append(
                        try await withClient(shard) { client in
                            try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table) WHERE \(condition)"))
                                .decode(Int64.self).reduce(0, +)
                        })
                }
                return counts
            }
            #expect(try await held("ledger_personal_values", where: "true").allSatisfy { $0 > 0 })
            let officer = live.client("dpo", roles: ["privacy"])
            // The export covers every shard too: each one's pseudonym of devin and the values it holds.
            let export = try await officer.exportPersonalData(account: "devin")
            #expect(export.account == "devin" && export.shards?.map(\.shard) == [0, 1])
            for part in export.shards ?? [] {
                #expect(!part.pseudonym.isEmpty && part.values.contains { $0.kind == "title" } && !part.positions.isEmpty)
            }
            let erased = try await officer.erasePersonalData(account: "devin", reason: "TICKET-49")
            #expect(erased.held && erased.shards?.map(\.shard) == [0, 1])
            for part in erased.shards ?? [] {
                #expect(part.held && part.position != nil && part.values.contains { $0.kind == "title" }, "shard \(part.shard ?? -1)")
            }
            #expect(try await held("ledger_personal_values", where: "true") == [0, 0])
            #expect(try await held("ledger_subjects", where: "account = 'devin'") == [0, 0])
            #expect(try await held("ledger_events", where: "event_type = 'PersonalDataErased'") == [1, 1])
            let gone = await rejection { _ = try await officer.exportPersonalData(account: "devin") }
            #expect(gone?.status == 404, "nothing held of devin on any shard")
            let again = try await officer.erasePersonalData(account: "devin", reason: "TICKET-49")
            #expect(!again.held && again.shards?.map(\.held) == [false, false])
            // Refused alike by every shard, before any erases: the role, a reason that is free text.
            let notOfficer = await rejection { _ = try await devin.erasePersonalData(account: "alice", reason: "T-1") }
            #expect(notOfficer?.status == 403)
            let freeText = await rejection { _ = try await officer.erasePersonalData(account: "alice", reason: "because she asked") }
            #expect(freeText?.status == 400)
            #expect(try await held("ledger_events", where: "event_type = 'PersonalDataErased'") == [1, 1])
        }
    }

    /// Every-shard paths no fan-out serves answer 501 not_across_shards; minPosition on an
    /// every-shard read 400; an unknown collaboration 404; health and readiness answer.
    @Test("every-shard paths without fan-out 501 not_across_shards; minPosition 400; unknown 404; health up")
    func refusals() async throws {
        try await Self.run { live in
            let devin = live.client("devin")
            let position = await rejection { _ = try await devin.myCollaborations(minPosition: 1) }
            #expect(position?.status == 400)
            #expect(position?.code == "invalid_query")
            let unknown = await rejection { _ = try await devin.members(of: UUID().uuidString.lowercased()) }
            #expect(unknown?.status == 404)
            // No signing key here: the top log has no checkpoint yet.
            let (_, top) = try await TestHTTP.data(from: live.baseURL.appendingPathComponent("tlog/checkpoint"))
            #expect(top.statusCode == 404)
            for path in ["health", "ready"] {
                let (_, response) = try await TestHTTP.data(from: live.baseURL.appendingPathComponent(path))
                #expect(response.statusCode == 200, "/\(path)")
            }
            // A path under an every-shard prefix that no fan-out serves: refused, never one shard's answer.
            for path in ["v1/accounts/me/other", "v1/privacy/other"] {
                let (body, response) = try await TestHTTP.data(for: try await live.request("GET", path, as: "devin"))
                #expect(response.statusCode == 501, "/\(path)")
                #expect(String(decoding: body, as: UTF8.self).contains("\"code\":\"not_across_shards\""), "/\(path)")
            }
        }
    }
}
