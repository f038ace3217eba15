import LedgerDeviceSimulator
import LedgerIndex
import Testing

/// `NodePosition` and `Hash256` keep their bits as words; these hold them to the bytes a store
/// writes and docs/TRUST.md describes, computed here bit by bit.
@Suite("Node positions and hashes as bits")
struct NodePositionTests {
    /// The first `depth` bits of `key`, the rest of their bytes zero: a position's stored prefix.
    static func prefix(of key: Hash256, depth: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: (depth + 7) / 8)
        for index in 0..<depth where key.bit(index) == 1 { bytes[index / 8] |= 0x80 >> UInt8(index % 8) }
        return bytes
    }

    @Test("every depth of random keys: the prefix, its round trip, the sibling, the child, the path")
    func positionsFromKeys() throws {
        var random = SeededRandom(seed: 31)
        for _ in 0..<40 {
            let key = random.hash()
            for depth in 0...NodePosition.maxDepth {
                let position = NodePosition(key: key, depth: depth)
                #expect(position.depth == depth)
                #expect(position.prefix == Self.prefix(of: key, depth: depth))
                let read = try #require(NodePosition(depth: depth, prefix: position.prefix))
                #expect(read == position && read.hashValue == position.hashValue)
                #expect(position.isOnPath(of: key))
                if depth >= 1 {
                    var flipped = Self.prefix(of: key, depth: depth)
                    flipped[(depth - 1) / 8] ^= 0x80 >> UInt8((depth - 1) % 8)
                    #expect(position.sibling.prefix == flipped && position.sibling != position)
                    #expect(position.sibling.sibling == position && !position.sibling.isOnPath(of: key))
                }
                if depth < NodePosition.maxDepth {
                    #expect(position.child(key.bit(depth)) == NodePosition(key: key, depth: depth + 1))
                    #expect(position.child(1 - key.bit(depth)) == NodePosition(key: key, depth: depth + 1).sibling)
                }
            }
        }
    }

    @Test("a stored position with a bit set past its depth, or of the wrong length or depth, is refused")
    func malformedPositions() {
        #expect(NodePosition(depth: 9, prefix: [0, 0x40]) == nil, "bit 9 set at depth 9")
        #expect(NodePosition(depth: 9, prefix: [0, 0x80]) != nil)
        #expect(NodePosition(depth: 9, prefix: [0]) == nil)
        #expect(NodePosition(depth: 8, prefix: [0, 0]) == nil)
        #expect(NodePosition(depth: 257, prefix: [UInt8](repeating: 0, count: 33)) == nil)
        #expect(NodePosition(depth: -1, prefix: []) == nil)
        #expect(NodePosition(depth: 0, prefix: []) == .root)
    }

    @Test("common prefixes, equality and order agree with the bytes, at every bit")
    func hashesAsBits() throws {
        var random = SeededRandom(seed: 32)
        for _ in 0..<50 {
            let key = random.hash()
            #expect(key.commonPrefix(with: key) == 256)
            let copy = try #require(Hash256(key.bytes))
            #expect(copy == key && copy.hashValue == key.hashValue)
            for bit in 0..<256 {
                var bytes = key.bytes
                bytes[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                let other = try #require(Hash256(bytes))
                #expect(key.commonPrefix(with: other) == bit && other.commonPrefix(with: key) == bit)
                #expect(other != key)
                #expect((key < other) == (key.bit(bit) == 0) && (other < key) == (key.bit(bit) == 1))
            }
        }
    }
}
