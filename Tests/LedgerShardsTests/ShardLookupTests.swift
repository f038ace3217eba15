import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import LedgerPostgres
import LedgerTestSupport
import LedgerTokens
import LedgerWire
import PostgresNIO
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A collaboration's lookup on shards (issue 67, "Shards"): each shard indexes its own log and
/// records its revisions in it; the answer leads from its shard's checkpoint to the top log's, and
/// verifies with the deployment's key alone, in Swift and with `ledger audit verify` and
/// `ledger audit members`.
@Suite("Lookups on shards")
struct ShardLookupTests {
    /// A collaboration on each shard with a grant, an invitation and a removal: its lookup lists
    /// exactly its shard's events of the collaboration, verifies through both levels, and the
    /// members folded from it equal the served members at each of its positions; a top level
    /// removed, another shard's, or under another key, is refused.
    @Test("each shard's collaboration lookup verifies through both levels and folds into the served members")
    func bothLevels() async throws {
        let signer = try NoteSigner(name: "lookup-shards.test/ledger")
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        try await LiveShards.run(shards: shards, configuration: .testing { $0.index = true }, signer: signer) { live in
            let (devin, alice) = (live.client("devin"), live.client("alice"))
            var made: [(shard: Int, id: String)] = []
            for attempt in 0..<64 where Set(made.map(\.shard)).count < 2 {
                let id = try await devin.prepareCollaboration(
                    localIdentifier: "lk \(attempt)", title: "Lookup", initiator: Initiator(handle: "devin@example.com")
                ).identifier
                if made.contains(where: { $0.shard == live.shard(of: id) }) { continue }
                let (granted, removed) = (
                    SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1)
                )
                _ = try await devin.updateParticipants(added: [granted.rootHashData, removed.rootHashData], in: id)
                _ = try await devin.updateParticipants(removed: [removed.rootHashData], in: id)
                guard case .granted = try await verify(alice, granted, in: id) else {
                    Issue.record("not granted")
                    return
                }
                made.append((live.shard(of: id), id))
            }
            try #require(Set(made.map(\.shard)).count == 2, "a collaboration on each shard in 64 starts")
            var answers: [IndexLookup] = []
            for (shard, id) in made {
                let positions = try await Self.scan(live, shard: shard, collaboration: id)
                let lookup = try await Self.lookup(devin, id, through: positions.last!)
                let report = try LookupVerifier.verify(
                    lookup, key: signer.verifier, asked: .collaboration(id), through: positions.last!, shard: shard)
                #expect(report.shard == shard && (report.topTreeSize ?? 0) >= 1)
                #expect(lookup.map != nil, "the partition map the top entry names")
                // Another shard's answer for the collaboration (an honest absence there) is refused once the shard is named.
                let other = #expect(throws: LookupVerifier.Failure.self) {
                    try LookupVerifier.verify(lookup, key: signer.verifier, asked: .collaboration(id), shard: 1 - shard)
                }
                #expect(other?.description.hasPrefix("shard:") == true, "\(String(describing: other))")
                #expect(report.positions == positions, "shard \(shard)")
                try await Self.members(lookup, of: id, positions: positions, served: devin, key: signer.verifier)
                try await Self.cli(lookup, id: id, shard: shard, live: live, key: signer.verifier)
                answers.append(lookup)
            }
            Self.refusals(answers, ids: made.map(\.id), key: signer.verifier)
            // The top log records the map served, by shard index (never a connection string).
            let maps = try await withClient(live.top) { client in
                try await client.query("SELECT data::text FROM ledger_events WHERE stream_id = 'shard-map' ORDER BY position")
                    .decode(String.self).reduce(into: [String]()) { $0.append($1) }
            }
            #expect(maps == [CanonicalJSON.encode(ShardMapRecorded(partitions: LiveShards.layout))], "\(maps)")
            // `size` is the front's to choose, for a collaboration and for an identity.
            let identity = "\(SimulatedPerson(collaborationId: made[0].id, devices: 1).rootHash)"
            for (query, status) in [
                ("", 400),
                ("identity=\(identity.addingPercentEncoding(withAllowedCharacters: CharacterSet.alphanumerics)!)&size=1", 400),
                ("collaboration=\(made[0].id)&size=1", 400),
            ] {
                let request = try await live.request("GET", "v1/audit/lookup?\(query)", as: "auditor", roles: ["auditor"])
                let (_, response) = try await TestHTTP.data(for: request)
                #expect(response.statusCode == status, "\(query)")
            }
        }
    }

    /// The collaboration's positions in its shard's log, by a scan of its rows.
    static func scan(_ live: LiveShards, shard: Int, collaboration id: String) async throws -> [Int64] {
        try await withClient(live.shards[shard]) { client in
            let rows = try await client.query(
                "SELECT position FROM ledger_events WHERE stream_id = \(Streams.collaboration(id)) ORDER BY position")
            var positions: [Int64] = []
            for try await position in rows.decode(Int64.self) { positions.append(position) }
            return positions
        }
    }

    /// The lookup, once its shard recorded a revision covering `through` and the top log recorded
    /// and signed a checkpoint covering the record (each within seconds; 503 until then).
    static func lookup(_ client: LedgerClient, _ id: String, through: Int64) async throws -> IndexLookup {
        try await waitUntil(timeout: .seconds(90), interval: .milliseconds(200), "a lookup of \(id) covering \(through) under the top log")
        {
            do {
                return try await client.lookup(collaboration: id).revision.logSize >= through
            } catch let error as LedgerError where error.code == "not_checkpointed" {
                return false
            }
        }
        return try await client.lookup(collaboration: id)
    }

    /// Members folded from the verified lookup equal the served members at each position.
    static func members(_ lookup: IndexLookup, of id: String, positions: [Int64], served: LedgerClient, key: NoteVerifier) async throws {
        for position in positions {
            let (_, state) = try VerifiedMembers.fold(lookup, key: key, collaboration: id, at: position)
            var folded: [String: String] = [:]
            for (hash, identity) in state?.identities ?? [:] where identity.status != .removed { folded[hash] = identity.status.rawValue }
            var members: [String: String] = [:]
            for member in try await served.members(of: id, atPosition: position).members { members[member.rootHash] = member.state }
            #expect(folded == members, "at \(position)")
        }
        // At the time of its last event, through both levels: once the shard's log has moved past
        // it under a checkpoint the top log recorded, the events recorded by then are all of them.
        let leaf = try #require(lookup.events.last.flatMap { Base64.decode($0.leaf) }.flatMap(EventLeaf.event(from:)))
        let time = RecordedTime.date(micros: leaf.recordedAtMicros)
        try await waitUntil(timeout: .seconds(90), interval: .milliseconds(200), "an answer bounded at \(leaf.recordedAtMicros)") {
            (try? await served.verifiedMembers(collaboration: id, key: key, at: time)) != nil
        }
        let verified = try await served.verifiedMembers(collaboration: id, key: key, at: time)
        #expect(verified.report.recordedThrough! >= positions.last!, "the last event's time bounds the collaboration's events")
        #expect(verified.report.positions.filter { $0 <= verified.report.recordedThrough! } == positions)
        #expect(verified.report.shard != nil && verified.state?.identities.count == 2)
    }

    /// `ledger audit verify` names the shard; `ledger audit members --url` prints the members.
    static func cli(_ lookup: IndexLookup, id: String, shard: Int, live: LiveShards, key: NoteVerifier) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shard-lookup-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (file, token) = (folder.appendingPathComponent("lookup.json"), folder.appendingPathComponent("token"))
        try JSONEncoder().encode(lookup).write(to: file)
        try await live.authority.issue(account: "devin", roles: []).write(to: token, atomically: true, encoding: .utf8)
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
        let verified = try await ProcessRunner.run(
            ledgerBinary(), ["audit", "verify", file.path, "--key", key.text, "--collaboration", id, "--shard", "\(shard)"],
            environment: environment)
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("/shard/\(shard), whose checkpoint is in the top log"), "\(verified.output)")
        let elsewhere = try await ProcessRunner.run(
            ledgerBinary(), ["audit", "verify", file.path, "--key", key.text, "--collaboration", id, "--shard", "\(1 - shard)"],
            environment: environment)
        #expect(elsewhere.status != 0 && elsewhere.output.contains("FAILED: shard:"), "\(elsewhere.output)")
        let members = try await ProcessRunner.run(
            ledgerBinary(),
            ["audit", "members", id, "--url", live.baseURL.absoluteString, "--token-file", token.path, "--key", key.text],
            environment: environment)
        #expect(members.status == 0 && members.output.contains("audit members: verified, \(id)"), "\(members.output)")
        #expect(members.output.contains("granted") && members.output.contains("removed"), "\(members.output)")
    }

    static func changed(_ lookup: IndexLookup, _ change: (inout IndexLookup) -> Void) -> IndexLookup {
        var lookup = lookup
        change(&lookup)
        return lookup
    }

    /// What no auditor may be shown as proved on shards: the answer without its top level (its
    /// checkpoint is the shard's, not signed under the deployment's origin), with the other
    /// shard's top level, with both levels checked against another deployment's key, without
    /// its partition map or with another entry for it, or the other shard's answer.
    static func refusals(_ answers: [IndexLookup], ids: [String], key: NoteVerifier) {
        for (n, lookup) in answers.enumerated() {
            var bare = lookup
            bare.top = nil
            var crossed = lookup
            crossed.top = answers[1 - n].top
            let cases: [(String, IndexLookup, NoteVerifier, String)] = [
                ("no top level", bare, key, "checkpoint:"),
                ("the other shard's top level", crossed, key, "checkpoint:"),
                ("another deployment's key", lookup, (try? NoteSigner(name: key.name).verifier) ?? key, "top checkpoint:"),
                ("no partition map", Self.changed(lookup) { $0.map = nil }, key, "map:"),
                (
                    "another top entry as the map",
                    Self.changed(lookup) { $0.map = IndexLookup.Entry(leaf: $0.top!.leaf, inclusion: $0.top!.inclusion) }, key, "map:"
                ),
                ("the map's leaf swapped", Self.changed(lookup) { $0.map!.leaf = $0.top!.leaf }, key, "map:"),
                // The other shard's answer, as an honest absence of this collaboration there would be.
                ("the other shard's answer", Self.changed(answers[1 - n]) { $0.collaboration = ids[n] }, key, "shard:"),
            ]
            for (what, answer, verifier, link) in cases {
                let failure = #expect(throws: LookupVerifier.Failure.self, "\(what)") {
                    try LookupVerifier.verify(answer, key: verifier, asked: .collaboration(ids[n]))
                }
                #expect(failure?.description.hasPrefix(link) == true, "\(what): \(String(describing: failure))")
            }
        }
    }
}
