import Foundation
import HTTPTypes
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import PostgresNIO
import Testing
import TransparencyLog

/// A key named by more events than one answer lists (10,000): the lookup answers in pages under
/// one checkpoint (`after`, `next`, `size`), the SDK merges them into one answer that verifies
/// and lists exactly what a scan finds, and one page alone is refused.
@Suite("Index lookups in pages")
struct LookupPagingTests {
    @Test("a collaboration of 10,100 events: its pages merged verify as one; a page alone is refused")
    func pages() async throws {
        try await LiveServer.run(configuration: LookupAPITests.configuration, signer: try NoteSigner(name: "lookup.test/ledger")) { api in
            var simulator = LogSimulator(seed: 67, lifecycle: true)
            let collaboration = simulator.collaboration(events: 10_100)
            try #require(collaboration.events.count > 10_000)
            let store = EventStore(client: api.db, logger: Logger(label: "paging"))
            let last = try await append(collaboration, to: store, chunk: 1_000).lastPosition
            let key = try NoteVerifier(try await api.call(.get, "/v1/log/key", as: "eve").raw)
            let id = collaboration.id
            let first = try await LookupAPITests.lookup(api, "collaboration=\(id)", through: last, key: key)
            #expect(first.positions.count == 10_000 && first.next == first.positions.last, "a first page of 10,000")
            let alone = #expect(throws: LookupVerifier.Failure.self) {
                try LookupVerifier.verify(first, key: key, asked: .collaboration(id))
            }
            #expect(alone?.description.hasPrefix("page") == true, "\(String(describing: alone))")
            // The SDK merges every page under the first one's checkpoint.
            let merged = try await api.client("auditor", roles: ["auditor"]).lookup(collaboration: id)
            #expect(merged.next == nil && merged.events.count == merged.positions.count)
            let report = try LookupVerifier.verify(merged, key: key, asked: .collaboration(id), through: last)
            #expect(report.positions == (try await LookupAPITests.scan(api, .collaboration(id), through: report.revisionSize)))
            #expect(report.positions.count == collaboration.events.count)
            // An after that is not a position is a 400.
            for query in ["after=-1", "after=x"] {
                let r = try await api.call(.get, "/v1/audit/lookup?collaboration=\(id)&\(query)", as: "auditor", roles: ["auditor"])
                #expect(r.status == .badRequest, "\(query): \(r.raw)")
            }
        }
    }
}
