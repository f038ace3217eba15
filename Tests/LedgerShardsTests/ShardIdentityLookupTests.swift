import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import PostgresNIO
import Testing
import TransparencyLog

/// An identity's lookup on shards (issue 67, "Shards"): every shard's answer through both levels,
/// under one partition map the top log records, each listing exactly what a scan of its shard's
/// log finds; an answer left out, repeated, out of order or of another key is refused, in Swift
/// and by `ledger audit verify`.
@Suite("An identity's lookup across shards")
struct ShardIdentityLookupTests {
    @Test("an identity named on both shards: each shard's answer under one map equals a scan; gaps refused")
    func acrossShards() async throws {
        let signer = try NoteSigner(name: "identity-shards.test/ledger")
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        try await LiveShards.run(shards: shards, configuration: .testing { $0.index = true }, signer: signer) { live in
            let (devin, auditor) = (live.client("devin"), live.client("auditor", roles: ["auditor"]))
            // A collaboration on each shard, one identity added to both.
            var made: [(shard: Int, id: String)] = []
            var person: SimulatedPerson?
            for attempt in 0..<64 where Set(made.map(\.shard)).count < 2 {
                let id = try await devin.prepareCollaboration(
                    localIdentifier: "idl \(attempt)", title: "Identity", initiator: Initiator(handle: "devin@example.com")
                ).identifier
                if made.contains(where: { $0.shard == live.shard(of: id) }) { continue }
                let someone = person ?? SimulatedPerson(collaborationId: id, devices: 1)
                person = someone
                _ = try await devin.updateParticipants(added: [someone.rootHashData], in: id)
                made.append((live.shard(of: id), id))
            }
            try #require(Set(made.map(\.shard)).count == 2, "a collaboration on each shard in 64 starts")
            let root = try #require(person).rootHash.bytes
            let asked = IndexKey.identity(try #require(Hash256(root)))
            let scans = [try await Self.scan(live, shard: 0, root: root), try await Self.scan(live, shard: 1, root: root)]
            #expect(scans.allSatisfy { !$0.isEmpty })
            try await waitUntil(timeout: .seconds(90), interval: .milliseconds(200), "every shard's answer covering its scan") {
                guard let sharded = try? await auditor.shardedLookup(identity: root) else { return false }
                return zip(sharded.shards, scans).allSatisfy { $0.revision.logSize >= $1.last! }
            }
            let sharded = try await auditor.shardedLookup(identity: root)
            let reports = try LookupVerifier.verify(sharded, key: signer.verifier, asked: asked)
            #expect(reports.map(\.shard) == [0, 1])
            for (report, scan) in zip(reports, scans) {
                #expect(report.positions.filter { $0 <= scan.last! } == scan, "shard \(report.shard ?? -1)")
            }
            // Another account may not ask.
            await #expect(throws: LedgerError.self) { try await devin.shardedLookup(identity: root) }

            func refused(_ what: String, at link: String, _ change: (inout ShardedIndexLookup) -> Void) {
                var answer = sharded
                change(&answer)
                let failure = #expect(throws: LookupVerifier.Failure.self, "\(what)") {
                    try LookupVerifier.verify(answer, key: signer.verifier, asked: asked)
                }
                #expect(failure?.description.hasPrefix(link) == true, "\(what): \(String(describing: failure))")
            }
            refused("a shard's answer left out", at: "shards") { $0.shards.removeLast() }
            refused("a shard's answer twice", at: "shards") { $0.shards[1] = $0.shards[0] }
            refused("the answers out of order", at: "shards") { $0.shards.reverse() }
            refused("another identity asked", at: "key") { $0.identity = Base64.encode([UInt8](repeating: 3, count: 32)) }
            let other = try await devin.lookup(collaboration: made[0].id)
            refused("a collaboration's answer among them", at: "answer 1: key") { $0.shards[0] = other }
            refused("an answer without its map", at: "answer 2: map") { $0.shards[1].map = nil }
            refused("an answer's map swapped for another entry", at: "answer 2: map") {
                $0.shards[1].map = $0.shards[0].top.map { IndexLookup.Entry(leaf: $0.leaf, inclusion: $0.inclusion) }
            }
            // One shard's answer alone is not an identity's answer.
            let alone = #expect(throws: LookupVerifier.Failure.self) {
                try LookupVerifier.verify(sharded.shards[0], key: signer.verifier, asked: asked)
            }
            #expect(alone?.description.hasPrefix("key: an identity's answer on shards") == true, "\(String(describing: alone))")

            // `ledger audit verify --identity` prints each listed event as `shard position`.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("sharded-\(UUID().uuidString.prefix(8)).json")
            defer { try? FileManager.default.removeItem(at: file) }
            try JSONEncoder().encode(sharded).write(to: file)
            let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
            let output = try await ProcessRunner.run(
                ledgerBinary(), ["audit", "verify", file.path, "--key", signer.verifier.text, "--identity", Base64.encode(root)],
                environment: environment)
            #expect(output.status == 0 && output.output.contains("on 2 shard(s), and no other"), "\(output.output)")
            for (shard, scan) in scans.enumerated() {
                for position in scan { #expect(output.output.contains("\n\(shard) \(position)\n"), "\(shard) \(position)") }
            }
            var dropped = sharded
            dropped.shards.removeFirst()
            try JSONEncoder().encode(dropped).write(to: file)
            let refusal = try await ProcessRunner.run(
                ledgerBinary(), ["audit", "verify", file.path, "--key", signer.verifier.text, "--identity", Base64.encode(root)],
                environment: environment)
            #expect(refusal.status == 2 && refusal.output.contains("FAILED: shards"), "\(refusal.output)")
        }
    }

    /// The positions of shard `shard`'s log whose collaboration events name `root`, by a scan.
    static func scan(_ live: LiveShards, shard: Int, root: [UInt8]) async throws -> [Int64] {
        let text = Base64.encode(root)
        return try await withClient(live.shards[shard]) { client in
            try await client.query(
                """
                SELECT position FROM ledger_events WHERE stream_id LIKE 'collaboration-%'
                AND (data->>'rootHash' = \(text) OR data->>'mentionedRootHash' = \(text)) ORDER BY position
                """
            ).decode(Int64.self).reduce(into: [Int64]()) { $0.append($1) }
        }
    }
}
