import Foundation
import LedgerDomain
import Testing

/// The events' canonical bytes, the chain's input.
struct EventLeafTests {
    @Test func leafBytesFeedTheChain() {
        let id = UUID(uuidString: "00000000-0000-7000-8000-000000000001")!
        let leaf = EventLeaf.bytes(
            position: 1, streamId: "s", version: 1, eventId: id, type: "T", data: "{}", metadata: "{}", recordedAtMicros: 2)
        // u64 1 | u32 1 "s" | u64 1 | 16 uuid bytes | u32 1 "T" | u32 2 "{}" | u32 2 "{}" | i64 2
        #expect(leaf.count == 8 + 5 + 8 + 16 + 5 + 6 + 6 + 8)
        #expect(Array(leaf[0 ..< 8]) == [0, 0, 0, 0, 0, 0, 0, 1])
        #expect(Array(leaf[8 ..< 13]) == [0, 0, 0, 1, UInt8(ascii: "s")])
        let chained = HashChain.hash(
            previous: HashChain.genesis, position: 1, streamId: "s", version: 1, eventId: id, type: "T", data: "{}", metadata: "{}",
            recordedAtMicros: 2)
        #expect(chained == HashChain.hash(previous: HashChain.genesis, leaf: leaf))
    }
}
