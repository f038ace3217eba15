import Foundation
import HTTPTypes
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import PostgresNIO
import Testing
import TransparencyLog

/// `GET /v1/audit/lookup` through the real router, on a ledger whose index recorder runs: every
/// answer verifies offline (`LookupVerifier`, and `ledger audit verify`) and lists exactly what a
/// scan of the log finds; each tampering an untrusted server could try is refused by the link it
/// breaks; who may ask is checked, and bad input is a 400.
@Suite("Index lookups over HTTP")
struct LookupAPITests {
    static let configuration = LedgerConfiguration.testing { $0.index = true }

    /// The lookup `query` asks, once a revision under the published checkpoint covers `through`.
    static func lookup(_ api: LiveServer, _ query: String, through: Int64, key: NoteVerifier) async throws -> IndexLookup {
        try await waitUntil(timeout: .seconds(60), "a recorded revision covering \(through) under the checkpoint") {
            let r = try await api.call(.get, "/v1/audit/lookup?\(query)", as: "auditor", roles: ["auditor"])
            guard r.status == .ok else { return false }
            return try JSONDecoder().decode(IndexLookup.self, from: Data(r.raw.utf8)).revision.logSize >= through
        }
        let r = try await api.call(.get, "/v1/audit/lookup?\(query)", as: "auditor", roles: ["auditor"])
        #expect(r.status == .ok, "\(r.raw)")
        return try JSONDecoder().decode(IndexLookup.self, from: Data(r.raw.utf8))
    }

    /// The identity the grant at `position` names (alice's in `grantedLog`): its hash and its query value.
    static func identity(_ api: LiveServer, grant position: Int64) async throws -> (hash: Hash256, query: String) {
        let rows = try await api.db.query("SELECT data->>'rootHash' FROM ledger_events WHERE position = \(position)")
        var text = ""
        for try await root in rows.decode(String.self) { text = root }
        return (try #require(Base64.decode(text).flatMap(Hash256.init)), text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
    }

    /// The positions up to `size` whose events name `key`, by a scan of the log's rows in SQL.
    static func scan(_ api: LiveServer, _ key: IndexKey, through size: Int64) async throws -> [Int64] {
        let rows: PostgresRowSequence
        switch key {
        case .collaboration(let id):
            rows = try await api.db.query(
                "SELECT position FROM ledger_events WHERE stream_id = \(Streams.collaboration(id)) AND position <= \(size) ORDER BY position"
            )
        case .identity(let root):
            rows = try await api.db.query(
                """
                SELECT position FROM ledger_events WHERE stream_id LIKE 'collaboration-%' AND position <= \(size)
                AND (data->>'rootHash' = \(root.base64) OR data->>'mentionedRootHash' = \(root.base64)) ORDER BY position
                """)
        }
        var positions: [Int64] = []
        for try await position in rows.decode(Int64.self) { positions.append(position) }
        return positions
    }

    @Test("lookups of a collaboration, an identity and an absent key verify offline and equal a scan")
    func lookupsVerify() async throws {
        try await LiveServer.run(configuration: Self.configuration, signer: try NoteSigner(name: "lookup.test/ledger")) { api in
            let (id, grant, key, _) = try await LogAPITests.grantedLog(api)
            let alice = try await Self.identity(api, grant: grant)
            for (query, asked) in [
                ("collaboration=\(id)", IndexKey.collaboration(id)),
                ("identity=\(alice.query)", .identity(alice.hash)),
                ("collaboration=no-such-collaboration", .collaboration("no-such-collaboration")),
            ] {
                let lookup = try await Self.lookup(api, query, through: grant, key: key)
                let report = try LookupVerifier.verify(lookup, key: key, asked: asked, through: grant)
                #expect(report.positions == (try await Self.scan(api, asked, through: report.revisionSize)), "\(query)")
                #expect(report.positions.isEmpty == (query == "collaboration=no-such-collaboration"), "\(query)")
                #expect(report.recordPosition > report.revisionSize && report.treeSize >= report.recordPosition)
            }
            // The SDK asks the same, for a collaboration and an identity.
            let sdk = api.client("auditor", roles: ["auditor"])
            for (lookup, asked) in [
                (try await sdk.lookup(collaboration: id), IndexKey.collaboration(id)),
                (try await sdk.lookup(identity: alice.hash.bytes), .identity(alice.hash)),
            ] {
                #expect(try LookupVerifier.verify(lookup, key: key, asked: asked, through: grant).positions.count >= 2)
            }
            // The owner asks for their collaboration; no one else, not even of one that does not exist.
            #expect(try await api.call(.get, "/v1/audit/lookup?collaboration=\(id)", as: "devin").status == .ok)
            for (uri, account) in [
                ("collaboration=\(id)", "mallory"), ("collaboration=no-such-collaboration", "mallory"),
                ("identity=\(alice.query)", "devin"),
            ] {
                #expect(try await api.call(.get, "/v1/audit/lookup?\(uri)", as: account).status == .forbidden, "\(uri) as \(account)")
            }
            #expect(try await api.call(.get, "/v1/audit/lookup?collaboration=\(id)").status == .unauthorized)
            let events = try await api.eventCount()
            for (query, message) in [
                ("", "one of the two"), ("collaboration=\(id)&identity=\(alice.query)", "one of the two"),
                ("collaboration=", "must not be empty"), ("identity=abc", "32 bytes"),
                ("identity=" + Base64.encode([UInt8](repeating: 1, count: 31)), "32 bytes"),
                ("collaboration=" + String(repeating: "x", count: 300), "at most 256"),
                ("collaboration=\(id)&size=0", "size"), ("collaboration=\(id)&size=x", "size"),
            ] {
                let r = try await api.call(.get, "/v1/audit/lookup?\(query)", as: "auditor", roles: ["auditor"])
                #expect(r.status == .badRequest && r.body["error"]?["message"]?.string?.contains(message) == true, "\(query): \(r.raw)")
            }
            // `ledger audit verify` prints the positions, or refuses.
            let lookup = try await Self.lookup(api, "collaboration=\(id)", through: grant, key: key)
            // `size`: under that signed checkpoint; a size never signed, or one no revision is recorded under, 404.
            let kept = try await api.call(
                .get, "/v1/audit/lookup?collaboration=\(id)&size=\(lookup.record.inclusion.treeSize)", as: "auditor", roles: ["auditor"])
            #expect(try JSONDecoder().decode(IndexLookup.self, from: Data(kept.raw.utf8)).revision == lookup.revision, "\(kept.raw)")
            for size in [Int64(1), 1 << 40] {
                let r = try await api.call(.get, "/v1/audit/lookup?collaboration=\(id)&size=\(size)", as: "auditor", roles: ["auditor"])
                #expect(r.status == .notFound, "size \(size): \(r.raw)")
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("lookup-\(UUID().uuidString.prefix(8)).json")
            defer { try? FileManager.default.removeItem(at: file) }
            try JSONEncoder().encode(lookup).write(to: file)
            let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
            let output = try await ProcessRunner.run(
                ledgerBinary(), ["audit", "verify", file.path, "--key", key.text, "--collaboration", id], environment: environment)
            #expect(output.status == 0 && output.output.contains("and no other"), "\(output.output)")
            // The key asked is required, and must be the answer's.
            for extra in [[], ["--collaboration", "no-such-collaboration"]] {
                let asked = try await ProcessRunner.run(
                    ledgerBinary(), ["audit", "verify", file.path, "--key", key.text] + extra, environment: environment)
                #expect(asked.status != 0, "\(extra): \(asked.output)")
            }
            #expect(output.output.split(separator: "\n").dropFirst().map { Int64($0) } == lookup.positions.map { $0 }, "\(output.output)")
            var dropped = lookup
            dropped.events.removeLast()
            dropped.positions.removeLast()
            try JSONEncoder().encode(dropped).write(to: file)
            let refused = try await ProcessRunner.run(
                ledgerBinary(), ["audit", "verify", file.path, "--key", key.text, "--collaboration", id], environment: environment)
            #expect(refused.status != 0 && refused.output.contains("FAILED: listing"), "\(refused.output)")
            #expect(try await api.eventCount() >= events)
        }
    }

    @Test("members folded from a verified lookup equal the served members at each position of the collaboration")
    func verifiedMembers() async throws {
        try await LiveServer.run(configuration: Self.configuration, signer: try NoteSigner(name: "lookup.test/ledger")) { api in
            let (id, _, key, _) = try await LogAPITests.grantedLog(api)
            // More history: carol invited with a window, then removed; dana invited.
            let (carol, dana) = (SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1))
            for body in [
                #"{"added":[{"rootHash":"\#(carol.rootHash)","notAfter":"2099-01-01T00:00:00Z"}]}"#, #"{"removed":["\#(carol.rootHash)"]}"#,
                #"{"added":["\#(dana.rootHash)"]}"#,
            ] {
                let r = try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: body)
                #expect(r.status == .ok, "\(r.raw)")
            }
            let last = try await api.call(.get, "/v1/collaborations/\(id)/history", as: "devin").body["events"]!.array.last!["position"]!
                .int!
            let lookup = try await Self.lookup(api, "collaboration=\(id)", through: last, key: key)
            #expect(lookup.positions.count >= 5)
            for position in lookup.positions {
                let (_, state) = try VerifiedMembers.fold(lookup, key: key, collaboration: id, at: position)
                var folded: [String: String] = [:]
                for (hash, identity) in state?.identities ?? [:] where identity.status != .removed {
                    folded[hash] = identity.status.rawValue
                }
                let served = try await api.call(.get, "/v1/collaborations/\(id)/members?atPosition=\(position)", as: "devin")
                var members: [String: String] = [:]
                for member in served.body["members"]?.array ?? [] { members[member["rootHash"]!.string!] = member["state"]!.string! }
                #expect(folded == members, "at \(position): \(served.raw)")
            }
            // A position past the answer's revision is refused: an event after it could be missing.
            #expect(throws: LookupVerifier.Failure.self) {
                try VerifiedMembers.fold(lookup, key: key, collaboration: id, at: lookup.revision.logSize + 1)
            }
        }
    }

    @Test("ledger index verify: recorded roots equal the index rebuilt from tiles; a forged one is named")
    func indexVerify() async throws {
        try await LiveServer.run(configuration: Self.configuration, signer: try NoteSigner(name: "lookup.test/ledger")) { api in
            let (id, grant, key, _) = try await LogAPITests.grantedLog(api)
            _ = try await Self.lookup(api, "collaboration=\(id)", through: grant, key: key)
            let auditor = LedgerClient(baseURL: api.baseURL, transport: HTTPClientTransport()) {
                try await api.token("auditor", roles: ["auditor"])
            }
            let verified = try await auditor.verifyIndex(key: key)
            #expect(!verified.revisions.isEmpty && verified.revisions.last!.logSize >= grant)
            #expect(verified.timesRiseFrom == 1, "a log written since times rise under the head's lock")
            let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("auditor-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: tokenFile) }
            try await api.token("auditor", roles: ["auditor"]).write(to: tokenFile, atomically: true, encoding: .utf8)
            let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
            let output = try await ProcessRunner.run(
                ledgerBinary(),
                ["index", "verify", "--url", api.baseURL.absoluteString, "--key", key.text, "--token-file", tokenFile.path],
                environment: environment)
            #expect(output.status == 0 && output.output.contains("index verify: OK"), "\(output.output)")
            #expect(output.output.contains("the leaves' times rise from position 1"), "\(output.output)")

            // A record with another root, appended by hand past the recorder's: named once a checkpoint covers it.
            let store = EventStore(client: api.db, logger: Logger(label: "test"))
            let head = try await store.head().position
            let state = try #require(try await store.streamState(IndexRevision.stream))
            let forged = try IndexRevision(logSize: head, root: Hash256([UInt8](repeating: 1, count: 32))!)
            let appended = try await store.append(
                .init(
                    streamId: IndexRevision.stream, expectedVersion: .exact(state.version),
                    events: [NewEvent(type: IndexRevision.type, data: forged.data)], state: forged.data))
            try await waitUntil(timeout: .seconds(30), "a published checkpoint covering the forged record") {
                try await auditor.publishedCheckpoint(key: key).checkpoint.size >= appended.lastPosition
            }
            let failure = await #expect(throws: LogAuditFailure.self) { try await auditor.verifyIndex(key: key) }
            #expect(failure?.description.contains("the index of the first \(head) leaves") == true, "\(String(describing: failure))")
        }
    }

    @Test("positions dropped or added, leaves swapped, stale revisions, false absences, other keys: refused")
    func tamperingRefused() async throws {
        try await LiveServer.run(configuration: Self.configuration, signer: try NoteSigner(name: "lookup.test/ledger")) { api in
            let earlier = try await api.call(.post, "/v1/collaborations", as: "erin", json: startBody).body["collaborationId"]!.string!
            let (id, grant, key, first) = try await LogAPITests.grantedLog(api)
            let honest = try await Self.lookup(api, "collaboration=\(id)", through: grant, key: key)
            let asked = IndexKey.collaboration(id)
            _ = try LookupVerifier.verify(honest, key: key, asked: asked, through: grant)
            let absent = try await Self.lookup(api, "collaboration=no-such-collaboration", through: grant, key: key)
            let other = try await Self.lookup(api, "collaboration=\(earlier)", through: grant, key: key)

            /// `change` applied to the honest answer is refused at `link` (the failure's first word).
            func refused(_ what: String, at link: String, through: Int64? = nil, _ change: (inout IndexLookup) -> Void) {
                var lookup = honest
                change(&lookup)
                let failure = #expect(throws: LookupVerifier.Failure.self, "\(what)") {
                    try LookupVerifier.verify(lookup, key: key, asked: asked, through: through)
                }
                #expect(failure?.description.hasPrefix(link) == true, "\(what): \(String(describing: failure))")
            }
            refused("a position dropped", at: "listing") {
                $0.events.remove(at: 1)
                $0.positions.remove(at: 1)
            }
            refused("a position added: an event of another collaboration", at: "listing") {
                $0.events.append(other.events[0])
                $0.positions.append(other.events[0].inclusion.position)
                $0.events.sort { $0.inclusion.position < $1.inclusion.position }
                $0.positions.sort()
            }
            refused("a leaf swapped", at: "event 2") { $0.events[1].leaf = $0.events[2].leaf }
            refused("the positions said otherwise", at: "positions") { $0.positions.removeLast() }
            refused("a stale revision passed off as covering more", at: "revision") { $0.revision.logSize += 5 }
            refused("a revision short of the position asked", at: "revision", through: honest.revision.logSize + 1) { _ in }
            refused("an absence proven for a present key", at: "listing") {
                $0.proof = absent.proof
                $0.events = []
                $0.positions = []
            }
            refused("the record's inclusion under another tree", at: "record") { $0.record.inclusion.treeSize = first.size }
            refused("another event passed off as the record", at: "record") { $0.record = $0.events[0] }
            refused("another key asked", at: "key") { $0.collaboration = "no-such-collaboration" }
            refused("a position that would overflow", at: "event 1") { $0.events[0].inclusion.position = .min }
            refused("a record position that would overflow", at: "record") { $0.record.inclusion.position = .min }
            // The record under an older checkpoint than its own: its inclusion cannot hold there.
            let older = try await api.call(.get, "/v1/log/checkpoint?size=\(first.size)", as: "eve").raw
            refused("the record under an older checkpoint", at: "record") { $0.checkpoint = older }
            refused("a checkpoint signed by another key", at: "checkpoint") {
                $0.checkpoint = $0.checkpoint.replacingOccurrences(of: "lookup.test/ledger", with: "other.test/ledger")
            }
        }
    }
}
