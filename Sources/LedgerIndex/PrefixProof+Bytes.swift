// A proof as bytes (docs/TRUST.md, "The verifiable index"): one kind byte (1 found, 2 another
// key's leaf, 3 empty), the terminal's hashes (the value; the other key's hash then its value;
// nothing), the depth as a big-endian u16 (0 ... 256), then that many siblings, top down, and
// nothing after.
extension PrefixProof {
    /// The proof's bytes. A proof deeper than 256 levels, which `verify` refuses (rule 1), is
    /// written as its terminal, the depth 257 and no sibling: bytes `init(bytes:)` refuses by the
    /// same rule, never a depth that wraps round the u16 (or traps) past 65,535 siblings.
    public var bytes: [UInt8] {
        let written = siblings.count <= NodePosition.maxDepth ? siblings : []
        let depth = siblings.count <= NodePosition.maxDepth ? siblings.count : NodePosition.maxDepth + 1
        var out: [UInt8] = []
        out.reserveCapacity(3 + 64 + 32 * written.count)
        switch terminal {
        case .found(let value): out += [1] + value.bytes
        case .otherLeaf(let key, let value): out += [2] + key.bytes + value.bytes
        case .empty: out.append(3)
        }
        out += [UInt8(depth >> 8), UInt8(depth & 0xFF)]
        for sibling in written { out += sibling.bytes }
        return out
    }

    /// The proof `bytes` hold; refused unless they are exactly what `bytes` writes for it.
    public init(bytes: [UInt8]) throws(Refused) {
        var at = 0
        func take(_ count: Int) throws(Refused) -> [UInt8] {
            guard bytes.count - at >= count else { throw Refused(rule: .bytes, description: "a proof cut short at byte \(bytes.count)") }
            defer { at += count }
            return Array(bytes[at..<at + count])
        }
        func hash() throws(Refused) -> Hash256 {
            // `take(32)` answers 32 bytes or throws.
            guard let hash = Hash256(try take(32)) else { throw Refused(rule: .bytes, description: "a hash of another size") }
            return hash
        }
        let terminal: Terminal
        switch try take(1)[0] {
        case 1: terminal = .found(value: try hash())
        case 2: terminal = .otherLeaf(key: try hash(), value: try hash())
        case 3: terminal = .empty
        case let kind: throw Refused(rule: .bytes, description: "a terminal of kind \(kind), not 1, 2 or 3")
        }
        let big = try take(2)
        let depth = Int(big[0]) << 8 | Int(big[1])
        guard depth <= NodePosition.maxDepth else { throw Refused(rule: .depth, description: "a path of \(depth) levels, past 256") }
        var siblings: [Hash256] = []
        siblings.reserveCapacity(depth)
        for _ in 0..<depth { siblings.append(try hash()) }
        guard at == bytes.count else { throw Refused(rule: .bytes, description: "\(bytes.count - at) bytes after the proof") }
        self.init(terminal: terminal, siblings: siblings)
    }
}
