import Foundation
import HTTPTypes
import LedgerAPI
import LedgerApp
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerTestSupport
import LedgerVerifier
import LedgerWire
import PostgresNIO
import Testing
import TransparencyLog

@Suite("Life cycle over HTTP")
struct LifecycleTests {
    /// Start, add three identities, verify on devices, highlights, remove one with an account,
    /// history in order.
    @Test("start, three identities added and verified on devices, highlights, one removed; history in order")
    func lifeCycle() async throws {
        try await LiveServer.run { api in
            let started = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody)
            let id = started.body["collaborationId"]!.string!
            let alice = SimulatedPerson(collaborationId: id, devices: 2)
            let bob = SimulatedPerson(collaborationId: id, devices: 1)
            let carol = SimulatedPerson(collaborationId: id, devices: 3)
            let added = try await api.call(
                .post, "/v1/collaborations/\(id)/participants", as: "devin",
                json: #"{"added":["\#(alice.rootHash)","\#(bob.rootHash)","\#(carol.rootHash)"]}"#)
            #expect(added.status == .ok)
            #expect(added.body["added"]?.array.count == 3)

            // Recipients verify on their devices (DER and raw signatures).
            let a1 = try await api.verify(id, alice, as: "alice", device: 0)
            #expect(a1.status == .ok, "\(a1.raw)")
            #expect(a1.body["status"]?.string == "granted" && a1.body["accountId"]?.string == "alice")
            #expect(a1.body["rootHash"]?.string == alice.rootHash.base64)
            let a2 = try await api.verify(id, alice, as: "alice", device: 1, der: false)
            #expect(a2.status == .ok, "\(a2.raw)")
            let b = try await api.verify(id, bob, as: "bob")
            #expect(b.status == .ok, "\(b.raw)")
            // Another account presenting bob's identity is refused.
            let stolen = try await api.verify(id, bob, as: "mallory")
            #expect(stolen.status == .forbidden && stolen.body["error"]?["reason"]?.string == "identity_claimed_by_another_account")

            // Highlights: a change by alice, a mention of bob by the owner.
            #expect(
                try await api.call(.post, "/v1/collaborations/\(id)/highlights", as: "alice", json: #"{"kind":"change","trigger":"edit"}"#)
                    .status == .created)
            #expect(
                try await api.call(
                    .post, "/v1/collaborations/\(id)/highlights", as: "devin", json: #"{"kind":"persistence","trigger":"renamed"}"#
                ).status == .created)
            let mention = try await api.call(
                .post, "/v1/collaborations/\(id)/highlights", as: "devin",
                json: #"{"kind":"mention","mentionedRootHash":"\#(bob.rootHash)"}"#)
            #expect(mention.status == .created)
            // Reads come from the views: ask for them to have reached our last write.
            let seen = mention.body["position"]!.int!
            let bobSees = try await api.call(.get, "/v1/collaborations/\(id)/highlights?minPosition=\(seen)", as: "bob").body["highlights"]!
                .array
            let aliceSees = try await api.call(.get, "/v1/collaborations/\(id)/highlights", as: "alice").body["highlights"]!.array
            #expect(bobSees.contains { $0["kind"]?.string == "mention" })
            #expect(!aliceSees.contains { $0["kind"]?.string == "mention" })
            // One notice per account that gained access: alice (two devices) and bob.
            #expect(
                aliceSees.filter { $0["trigger"]?.string == "addedCollaborator" }.compactMap { $0["accountId"]?.string } == [
                    "alice", "bob",
                ])

            let beforeRemoval = try await api.call(.get, "/v1/collaborations/\(id)/members", as: "devin").body["position"]!.int!
            // A moment between the grants and the removal, clear of both by a few milliseconds
            // (asOf is given to the millisecond, recording times are in microseconds).
            let cut = Date().addingTimeInterval(0.003)
            try await waitUntil(timeout: .seconds(5), interval: .milliseconds(1), "the clock past the cut") {
                Date() > cut.addingTimeInterval(0.003)
            }

            // Remove alice's identity: her access is revoked and recorded.
            let removed = try await api.call(
                .post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"removed":["\#(alice.rootHash)"]}"#)
            #expect(removed.status == .ok)
            #expect(removed.body["revokedAccounts"]?.array == [.string("alice")])
            let position = removed.body["position"]!.int!
            #expect(
                try await api.call(.post, "/v1/collaborations/\(id)/highlights", as: "alice", json: #"{"kind":"change","trigger":"edit"}"#)
                    .status == .forbidden)
            let again = try await api.verify(id, alice, as: "alice")
            #expect(again.status == .forbidden && again.body["error"]?["reason"]?.string == "identity_removed")

            // Members now and at the moment before the removal.
            let now = try await api.call(.get, "/v1/collaborations/\(id)/members?minPosition=\(position)", as: "devin").body
            #expect(now["members"]!.array.count == 2)
            let then = try await api.call(.get, "/v1/collaborations/\(id)/members?atPosition=\(beforeRemoval)", as: "devin").body
            let aliceThen = then["members"]!.array.first { $0["rootHash"]?.string == alice.rootHash.base64 }
            #expect(aliceThen?["state"]?.string == "granted" && aliceThen?["accountId"]?.string == "alice")
            // The same by time: before the removal, after it, and before the collaboration.
            func asOf(_ date: Date) async throws -> JSONValue {
                let time = date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                return try await api.call(.get, "/v1/collaborations/\(id)/members?asOf=\(time)&minPosition=\(position)", as: "devin").body
            }
            let atCut = try await asOf(cut)
            #expect(atCut["members"] == then["members"], "\(atCut)")
            #expect(atCut["position"]!.int! < position && atCut["position"]!.int! <= beforeRemoval)
            let later = try await asOf(Date().addingTimeInterval(3600))
            #expect(later["members"] == now["members"] && later["position"]!.int! == position)
            let before = try await asOf(Date(timeIntervalSince1970: 946_684_800))
            #expect(before["members"]?.array == [] && before["position"]?.int == 0)

            let collab = try await api.call(.get, "/v1/collaborations/\(id)?minPosition=\(position)", as: "bob").body
            #expect(collab["selectedOptions"]?["permission"]?.array == [.string("rw")])
            #expect(collab["memberCounts"]?["granted"]?.int == 1 && collab["memberCounts"]?["removed"]?.int == 1)

            // History, in order, for the owner and for an auditor.
            let history = try await api.call(.get, "/v1/collaborations/\(id)/history", as: "devin").body["events"]!.array
            let types = history.map { $0["type"]!.string! }
            #expect(types.first == "CollaborationStarted")
            #expect(types.filter { $0 == "IdentityAdded" }.count == 3)
            let removal = try #require(types.firstIndex(of: "IdentityRemoved"))
            #expect(types[removal + 1] == "AccessRevoked")
            #expect(types.last == "ProofRejected")  // alice's attempt after her removal
            #expect(types.contains("ProofRejected"))
            let positions = history.map { $0["position"]!.int! }
            #expect(positions == positions.sorted())
            #expect(try await api.call(.get, "/v1/collaborations/\(id)/history", as: "eve", roles: ["auditor"]).status == .ok)

            let audit = try await api.call(.get, "/v1/audit/access?account=alice&minPosition=\(position)", as: "eve", roles: ["auditor"])
                .body["records"]!.array
            #expect(audit.map { $0["change"]!.string! } == ["granted", "granted", "revoked"])
            let mine = try await api.call(.get, "/v1/accounts/me/collaborations", as: "bob").body["collaborations"]!.array
            #expect(mine.map { $0["role"]!.string! } == ["member"])
            #expect(try await api.call(.get, "/v1/accounts/me/collaborations", as: "alice").body["collaborations"]!.array.isEmpty)
        }
    }

    @Test("proof refusals: replayed, expired, another account's challenge or collaboration's root, bad input")
    func proofRefusals() async throws {
        try await LiveServer.run(configuration: .testing { $0.challengeLifetime = .seconds(60) }) { api in
            let id = try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody).body["collaborationId"]!.string!
            let other = try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody).body["collaborationId"]!.string!
            let alice = SimulatedPerson(collaborationId: id, devices: 1)
            let outsider = SimulatedPerson(collaborationId: other, devices: 1)
            _ = try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "owner", json: #"{"added":["\#(alice.rootHash)"]}"#)
            _ = try await api.call(
                .post, "/v1/collaborations/\(other)/participants", as: "owner", json: #"{"added":["\#(outsider.rootHash)"]}"#)

            func reason(_ r: (status: HTTPResponse.Status, body: JSONValue, raw: String)) -> String? {
                #expect(r.status == .forbidden, "\(r.raw)")
                return r.body["error"]?["reason"]?.string
            }
            // Replay: the same request twice.
            let challenge = try await api.challenge(id, as: "alice")
            let body = proofBody(alice, challenge: challenge)
            #expect(try await api.call(.post, "/v1/collaborations/\(id)/proofs", as: "alice", json: body).status == .ok)
            #expect(reason(try await api.call(.post, "/v1/collaborations/\(id)/proofs", as: "alice", json: body)) == "challenge_used")
            // Another account's challenge.
            let bobs = try await api.challenge(id, as: "bob")
            #expect(
                reason(try await api.call(.post, "/v1/collaborations/\(id)/proofs", as: "alice", json: proofBody(alice, challenge: bobs)))
                    == "challenge_wrong_account")
            // A challenge for another collaboration.
            let elsewhere = try await api.challenge(other, as: "alice")
            #expect(
                reason(
                    try await api.call(.post, "/v1/collaborations/\(id)/proofs", as: "alice", json: proofBody(alice, challenge: elsewhere)))
                    == "challenge_wrong_collaboration")
            // Another collaboration's root hash.
            #expect(reason(try await api.verify(id, outsider, as: "carol")) == "unknown_identity")
            // Expired: the database clock decides.
            let stale = try await api.challenge(id, as: "dave")
            try await api.db.query(
                "UPDATE ledger_challenges SET expires_at = now() - interval '1 second' WHERE challenge_id = \(UUID(uuidString: stale["challengeId"]!.string!)!)"
            )
            #expect(
                reason(try await api.call(.post, "/v1/collaborations/\(id)/proofs", as: "dave", json: proofBody(alice, challenge: stale)))
                    == "challenge_expired")
            // Signature over other data.
            let fresh = try await api.challenge(id, as: "erin")
            var forged = proofBody(alice, challenge: fresh)
            let wrongSig = Base64.encode(alice.sign(Array("other".utf8), device: 0))
            forged = forged.replacingOccurrences(
                of: #""signature":"[^"]*""#, with: #""signature":"\#(wrongSig)""#, options: .regularExpression)
            #expect(reason(try await api.call(.post, "/v1/collaborations/\(id)/proofs", as: "erin", json: forged)) == "bad_signature")
            // An unknown challenge id.
            let unknown = proofBody(
                alice, challenge: .object(["challengeId": .string(UUID().uuidString), "challenge": fresh["challenge"]!]))
            #expect(reason(try await api.call(.post, "/v1/collaborations/\(id)/proofs", as: "frank", json: unknown)) == "challenge_unknown")

            let recorded = try await api.eventCount()
            // Bad input: 400s that record nothing.
            let c = try await api.challenge(id, as: "gina")
            let good = proofBody(alice, challenge: c)
            let key = Base64.encode(alice.proof(device: 0).publicKey)
            let badInputs: [(String, String)] = [
                (
                    good.replacingOccurrences(of: key, with: Base64.encode(Array(alice.proof(device: 0).publicKey.dropFirst()))),
                    "invalid_public_key"
                ),
                (good.replacingOccurrences(of: key, with: "%%%"), "invalid_base64"),
                (good.replacingOccurrences(of: #""publicKeyIndex":"#, with: #""publicKeyIndex":1000000"#), "invalid_inclusion_path"),
                (#"{"challengeId":"x","signature":"","proof":{"publicKey":"","publicKeyIndex":0,"inclusionHashes":[]}}"#, "invalid_value"),
                (#"{"challengeId":"\#(c["challengeId"]!.string!)"}"#, "missing_field"),
            ]
            for (body, code) in badInputs {
                let r = try await api.call(.post, "/v1/collaborations/\(id)/proofs", as: "gina", json: body)
                #expect(r.status == .badRequest, "\(code): \(r.raw)")
                #expect(r.body.errorCode == code, "\(r.raw)")
            }
            #expect(try await api.eventCount() == recorded)
            // A challenge on a collaboration that does not exist: 404, and none stored.
            let challenges: PostgresQuery = "SELECT count(*)::int8 FROM ledger_challenges"
            let issued = try await api.db.query(challenges).decode(Int64.self).reduce(0, +)
            let missing = try await api.call(
                .post, "/v1/challenges", as: "gina", json: #"{"collaborationId":"\#(UUID().uuidString.lowercased())"}"#)
            #expect(missing.status == .notFound)
            #expect(missing.body.errorCode == "not_found", "\(missing.raw)")
            #expect(try await api.db.query(challenges).decode(Int64.self).reduce(0, +) == issued)
        }
    }

    @Test("a flood of rejected proofs from one account is throttled and stops growing the log")
    func throttle() async throws {
        var settings = ProofEngine.Settings(maxGroup: 64)
        settings.rejectionLimit = 3
        settings.deadline = .seconds(60)  // room for a machine the whole suite loads
        try await LiveServer.run(engine: .init(settings: settings)) { api in
            let id = try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody).body["collaborationId"]!.string!
            let stranger = SimulatedPerson(collaborationId: id, devices: 1)
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<6 { statuses.append(try await api.verify(id, stranger, as: "flooder").status) }
            #expect(statuses == [.forbidden, .forbidden, .forbidden, .tooManyRequests, .tooManyRequests, .tooManyRequests])
            #expect(try await api.eventCount() == 4)
        }
    }

    @Test("membership notices: one per account on first access (not per device), on loss, on readmission")
    func membershipNoticesPerAccount() async throws {
        try await LiveServer.run { api in
            let id = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
            let bob = SimulatedPerson(collaborationId: id, devices: 3)
            let carol = SimulatedPerson(collaborationId: id, devices: 1)
            try await api.call(
                .post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"added":["\#(bob.rootHash)","\#(carol.rootHash)"]}"#)
            for device in 0..<3 { #expect(try await api.verify(id, bob, as: "bob", device: device).status == .ok) }
            try await api.call(.post, "/v1/collaborations/\(id)/highlights", as: "devin", json: #"{"kind":"change","trigger":"edit"}"#)
            #expect(try await api.verify(id, carol, as: "carol").status == .ok)
            try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"removed":["\#(bob.rootHash)"]}"#)
            try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: #"{"added":["\#(bob.rootHash)"]}"#)
            for device in 0..<2 { #expect(try await api.verify(id, bob, as: "bob", device: device).status == .ok) }
            let last = try #require(try await api.verify(id, bob, as: "bob", device: 2).body["position"]?.int)

            let notices = try await api.call(.get, "/v1/collaborations/\(id)/highlights?minPosition=\(last)", as: "carol").body[
                "highlights"]!.array
            let membership = notices.filter { $0["kind"]?.string == "membership" }.map {
                "\($0["trigger"]!.string!) \($0["accountId"]!.string!)"
            }
            #expect(membership == ["addedCollaborator bob", "addedCollaborator carol", "removedCollaborator bob", "addedCollaborator bob"])
            #expect(notices.contains { $0["kind"]?.string == "change" })
            // Pages of one and of two, each kind cut at its own page: the same notices in the same order.
            for limit in [1, 2] {
                var paged: [JSONValue] = []
                var cursor: String?
                repeat {
                    let resume = cursor?.addingPercentEncoding(withAllowedCharacters: .alphanumerics).map { "&cursor=\($0)" }
                    let query = "limit=\(limit)" + (resume ?? "&minPosition=\(last)")
                    let page = try await api.call(.get, "/v1/collaborations/\(id)/highlights?\(query)", as: "carol").body
                    let items = page["highlights"]!.array
                    #expect(items.count <= limit)
                    paged += items
                    cursor = page["nextCursor"]?.string
                } while cursor != nil && paged.count <= notices.count
                #expect(paged == notices, "pages of \(limit)")
            }
        }
    }
}
