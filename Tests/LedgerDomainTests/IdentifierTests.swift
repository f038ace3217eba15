import Foundation
import LedgerDomain
import Testing

@Suite("Identifiers")
struct IdentifierTests {
    static func bytes(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }

    @Test("a time-ordered UUID is version 7: the Unix milliseconds first, then the version and the variant")
    func layout() {
        let id = Identifiers.timeOrderedUUID(now: Date(timeIntervalSince1970: 1_795_000_000.123_5))
        let bytes = Self.bytes(id)
        #expect(bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } == 1_795_000_000_123)
        #expect(bytes[6] >> 4 == 7)
        #expect(bytes[8] >> 6 == 0b10)
        #expect(Array(id.uuidString)[14] == "7")
        // Events made without an id get one.
        #expect(Array(NewEvent(type: "T", data: "{}").eventId.uuidString)[14] == "7")
    }

    /// Time-ordered UUIDs sort (byte by byte, as PostgreSQL compares uuids) in the order of their
    /// instants, within a millisecond too; one instant gives different ids.
    @Test("time-ordered UUIDs sort byte by byte in their instants' order, within a millisecond too, never equal")
    func order() {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let ids = [0, 0.000_3, 0.000_6, 0.001, 0.5, 1, 3600].map { Identifiers.timeOrderedUUID(now: start.addingTimeInterval($0)) }
        let keys = ids.map(Self.bytes)
        #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(Set(ids).count == ids.count)
        #expect(Identifiers.timeOrderedUUID(now: start) != Identifiers.timeOrderedUUID(now: start))
    }
}
