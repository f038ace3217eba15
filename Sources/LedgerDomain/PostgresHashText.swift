/// PostgreSQL's `hashtext(text)`, which PL/Proxy's `RUN ON hashtext(id)` routes by: the ledger
/// computes it for the ids it routes itself, so it can never place a collaboration on another
/// shard than PL/Proxy does (`ShardRoutingTests` compares the two on 10,000 ids against a real
/// PostgreSQL and a real PL/Proxy).
///
/// For a deterministic collation (every database the ledger makes), `hashtext` is `hash_bytes`
/// of the text's bytes: Bob Jenkins' lookup3 (2006) as `src/common/hashfn.c` adapts it, with the
/// bytes read as little-endian words. A big-endian server reads them the other way round and
/// hashes differently; the ledger's clusters run on little-endian machines (x86-64, arm64).
public enum PostgresHashText {
    /// `hashtext(text)`: the 32-bit hash as PostgreSQL returns it (an int4).
    public static func hash(_ text: String) -> Int32 {
        Int32(bitPattern: hashBytes(Array(text.utf8)))
    }

    /// `hash_bytes(k, len)`.
    static func hashBytes(_ key: [UInt8]) -> UInt32 {
        var a: UInt32 = 0x9e37_79b9 &+ UInt32(truncatingIfNeeded: key.count) &+ 3_923_095
        var b = a
        var c = a
        func word(_ at: Int) -> UInt32 {
            UInt32(key[at]) | UInt32(key[at + 1]) << 8 | UInt32(key[at + 2]) << 16 | UInt32(key[at + 3]) << 24
        }
        var start = 0
        while key.count - start >= 12 {
            a &+= word(start)
            b &+= word(start + 4)
            c &+= word(start + 8)
            mix(&a, &b, &c)
            start += 12
        }
        // The last 0-11 bytes: bytes 0-3 into a, 4-7 into b, 8-10 into c above its lowest byte
        // (reserved for the length in Jenkins' original).
        for (offset, byte) in key[start...].enumerated() {
            switch offset {
            case 0..<4: a &+= UInt32(byte) << (8 * offset)
            case 4..<8: b &+= UInt32(byte) << (8 * (offset - 4))
            default: c &+= UInt32(byte) << (8 * (offset - 7))
            }
        }
        final(&a, &b, &c)
        return c
    }

    private static func rot(_ x: UInt32, _ k: UInt32) -> UInt32 { (x << k) | (x >> (32 - k)) }

    private static func mix(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32) {
        a &-= c
        a ^= rot(c, 4)
        c &+= b
        b &-= a
        b ^= rot(a, 6)
        a &+= c
        c &-= b
        c ^= rot(b, 8)
        b &+= a
        a &-= c
        a ^= rot(c, 16)
        c &+= b
        b &-= a
        b ^= rot(a, 19)
        a &+= c
        c &-= b
        c ^= rot(b, 4)
        b &+= a
    }

    private static func final(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32) {
        c ^= b
        c &-= rot(b, 14)
        a ^= c
        a &-= rot(c, 11)
        b ^= a
        b &-= rot(a, 25)
        c ^= b
        c &-= rot(b, 16)
        a ^= c
        a &-= rot(c, 4)
        b ^= a
        b &-= rot(a, 14)
        c ^= b
        c &-= rot(b, 24)
    }
}
