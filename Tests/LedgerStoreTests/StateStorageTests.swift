import Foundation
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import PostgresNIO
import Testing

/// How the streams' inline states are stored (migration 0032): every command rewrites its
/// collaboration's state whole, so a large state is compressed again on every write, with lz4.
struct StateStorageTests {
    @Test("a state past the TOAST threshold is stored compressed with lz4, and read back as written")
    func largeStateWithLZ4() async throws {
        try await withTestStore { store, client, _ in
            // About 60 kB, as a state of some 750 identities: high-entropy keys, repeated shape.
            let identities = (0..<750).map { n in
                #""\#(String(n * 7_919, radix: 36))\#(UUID().uuidString)":{"account":"p-\#(n)","status":"granted"}"#
            }
            let state = #"{"identities":{"# + identities.joined(separator: ",") + "}}"
            var written: [String] = []
            for version in 0..<2 {
                let next = version == 0 ? state : state.replacingOccurrences(of: "granted", with: "removed")
                _ = try await store.append(
                    .init(
                        streamId: "collaboration-big", expectedVersion: version == 0 ? .noStream : .exact(1),
                        events: [event("E", version + 1)], state: next))
                written.append(next)
            }
            let rows = try await client.query(
                "SELECT pg_column_compression(state), pg_column_size(state), octet_length(state::text) FROM ledger_streams WHERE stream_id = 'collaboration-big'"
            )
            for try await (method, stored, length) in rows.decode((String?, Int, Int).self) {
                #expect(method == "lz4")
                #expect(stored < length)
            }
            #expect(try await store.streamState("collaboration-big")?.state == written.last)
        }
    }
}
