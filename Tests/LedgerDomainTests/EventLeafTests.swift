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
        #expect(Array(leaf[0..<8]) == [0, 0, 0, 0, 0, 0, 0, 1])
        #expect(Array(leaf[8..<13]) == [0, 0, 0, 1, UInt8(ascii: "s")])
        let chained = HashChain.hash(
            previous: HashChain.genesis, position: 1, streamId: "s", version: 1, eventId: id, type: "T", data: "{}", metadata: "{}",
            recordedAtMicros: 2)
        #expect(chained == HashChain.hash(previous: HashChain.genesis, leaf: leaf))
    }

    @Test("a leaf reads back as its event (a tlog-proof's entry); a truncated, padded or non-UTF-8 one does not")
    func leafReadsBack() throws {
        let event = RecordedEvent(
            position: 42, streamId: "collaboration-é", version: 3, eventId: UUID(), type: "AccessGranted", data: #"{"a":"ü"}"#,
            metadata: "{}", recordedAtMicros: -5, hash: [])
        let leaf = EventLeaf.bytes(event)
        #expect(EventLeaf.event(from: leaf) == event)
        #expect(EventLeaf.event(from: Array(leaf.dropLast())) == nil)
        #expect(EventLeaf.event(from: leaf + [0]) == nil)
        #expect(EventLeaf.event(from: []) == nil)
        // The stream id's length, its u32 at bytes 8..<12, past the leaf's end.
        var long = leaf
        long[8] = 0xFF
        #expect(EventLeaf.event(from: long) == nil)
        // "é" is 0xC3 0xA9 at the stream id's end: 0xFF instead is not UTF-8.
        var invalid = leaf
        let at = try #require((0..<invalid.count - 1).first { invalid[$0] == 0xC3 && invalid[$0 + 1] == 0xA9 })
        invalid[at + 1] = 0xFF
        #expect(EventLeaf.event(from: invalid) == nil)
    }
}
