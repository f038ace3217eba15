import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A collaboration named by more events than one answer lists, on shards: the top log picks the
/// first page's checkpoint, the next pages are the shard's own under it (`after` with `size`), and
/// the pages merged verify through both levels as one answer.
@Suite("Lookups on shards in pages")
struct ShardLookupPagingTests {
    @Test("a collaboration of 10,100 events on its shard: pages merged verify through both levels; refusals")
    func pages() async throws {
        let signer = try NoteSigner(name: "paging-shards.test/ledger")
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        try await LiveShards.run(shards: shards, configuration: .testing { $0.index = true }, signer: signer) { live in
            var simulator = LogSimulator(seed: 68, lifecycle: true)
            let collaboration = simulator.collaboration(events: 10_100)
            try #require(collaboration.events.count > 10_000)
            let (id, shard) = (collaboration.id, live.shard(of: collaboration.id))
            let last = try await withClient(live.shards[shard]) { client in
                try await append(collaboration, to: EventStore(client: client, logger: Logger(label: "paging")), chunk: 1_000).lastPosition
            }
            let auditor = live.client("auditor", roles: ["auditor"])
            let merged = try await ShardLookupTests.lookup(auditor, id, through: last)
            #expect(merged.next == nil && merged.top != nil && merged.map != nil, "merged: one answer with its top level and map")
            let report = try LookupVerifier.verify(merged, key: signer.verifier, asked: .collaboration(id), through: last, shard: shard)
            #expect(report.positions == (try await ShardLookupTests.scan(live, shard: shard, collaboration: id)))
            #expect(report.positions.count == collaboration.events.count)
            // A next page without the first page's checkpoint or after a position 0, and an
            // identity's in pages: 400s, each saying why.
            let identity = Data(repeating: 7, count: 32).base64EncodedString().addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let size = merged.record.inclusion.treeSize
            for (query, says) in [
                ("collaboration=\(id)&after=1", "give its size"), ("collaboration=\(id)&after=0&size=\(size)", "1 or more"),
                ("identity=\(identity)&after=1", "not answered in pages"),
            ] {
                let (body, response) = try await TestHTTP.data(
                    for: try await live.request("GET", "/v1/audit/lookup?\(query)", as: "auditor", roles: ["auditor"]))
                let text = String(decoding: body, as: UTF8.self)
                #expect(response.statusCode == 400 && text.contains("invalid_query") && text.contains(says), "\(query): \(text)")
            }
        }
    }
}
