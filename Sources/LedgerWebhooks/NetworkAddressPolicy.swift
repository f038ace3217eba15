#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which IP addresses a webhook may reach: public ones only (SPEC "Change feed and webhooks": no
/// request forgery into the operator's network). Pure: an address's bytes in (4 for IPv4, 16 for
/// IPv6), a verdict out. The ranges are IANA's special-purpose registries (RFC 6890 and its
/// updates); an IPv6 address that carries an IPv4 address (IPv4-mapped, NAT64, 6to4) is judged
/// by the IPv4 address it reaches, and IPv6 outside global unicast (2000::/3) is not public.
public enum NetworkAddressPolicy {
    /// What kind of non-public address.
    public enum Kind: String, Sendable {
        case unspecified, loopback
        case privateUse = "private"
        case linkLocal = "link-local"
        case sharedAddressSpace = "shared address space (carrier-grade NAT)"
        case multicast, broadcast, documentation, benchmarking, reserved
    }

    /// Why an address is not public: its kind and the range it falls in.
    public struct NonPublic: Sendable, Equatable, CustomStringConvertible {
        public var kind: Kind
        public var range: String
        public var description: String { "\(kind.rawValue) (\(range))" }
    }

    /// Why `address` is not public; nil if it is (or is neither 4 nor 16 bytes long: nothing to
    /// connect to, which the resolver never returns).
    public static func nonPublic(_ address: [UInt8]) -> NonPublic? {
        switch address.count {
        case 4: return first(of: v4Blocks, containing: address)
        case 16: return nonPublicV6(address)
        default: return NonPublic(kind: .reserved, range: "not an IP address")
        }
    }

    static func nonPublicV6(_ address: [UInt8]) -> NonPublic? {
        // Forms that carry an IPv4 address: the connection reaches that address.
        for (prefix, bits, offset, name) in embeddingV4 where matches(address, prefix, bits) {
            let inner = Array(address[offset..<offset + 4])
            return nonPublic(inner).map { NonPublic(kind: $0.kind, range: "\($0.range) as \(name)") }
        }
        if let refused = first(of: v6Blocks, containing: address) { return refused }
        // Global unicast is 2000::/3; everything else is reserved, unique-local, link-local or multicast.
        guard address[0] & 0xe0 == 0x20 else { return NonPublic(kind: .reserved, range: "outside global unicast 2000::/3") }
        return nil
    }

    struct Block: Sendable {
        var prefix: [UInt8]
        var bits: Int
        var kind: Kind
        var text: String
    }

    /// The first range (most specific first) that holds `address`, as a refusal.
    static func first(of blocks: [Block], containing address: [UInt8]) -> NonPublic? {
        blocks.first { $0.prefix.count == address.count && matches(address, $0.prefix, $0.bits) }
            .map { NonPublic(kind: $0.kind, range: $0.text) }
    }

    /// Whether the first `bits` bits of `address` are those of `prefix` (both as long as `bits` needs).
    static func matches(_ address: [UInt8], _ prefix: [UInt8], _ bits: Int) -> Bool {
        guard address.count * 8 >= bits, prefix.count * 8 >= bits else { return false }
        let whole = bits / 8
        guard address[..<whole] == prefix[..<whole] else { return false }
        let rest = bits % 8
        guard rest > 0 else { return true }
        let mask = UInt8(0xff) << (8 - rest)
        return address[whole] & mask == prefix[whole] & mask
    }

    static func block(_ cidr: String, _ kind: Kind) -> Block {
        let parts = cidr.split(separator: "/")
        // The table below is constant: a malformed entry is a programming error caught by the tests.
        guard parts.count == 2, let prefix = parse(String(parts[0])), let bits = Int(parts[1]) else {
            preconditionFailure("malformed range \(cidr)")
        }
        return Block(prefix: prefix, bits: bits, kind: kind, text: cidr)
    }

    static let v4Blocks: [Block] = [
        block("0.0.0.0/32", .unspecified), block("0.0.0.0/8", .reserved), block("10.0.0.0/8", .privateUse),
        block("100.64.0.0/10", .sharedAddressSpace), block("127.0.0.0/8", .loopback), block("169.254.0.0/16", .linkLocal),
        block("172.16.0.0/12", .privateUse), block("192.0.0.0/24", .reserved), block("192.0.2.0/24", .documentation),
        block("192.88.99.0/24", .reserved), block("192.168.0.0/16", .privateUse), block("198.18.0.0/15", .benchmarking),
        block("198.51.100.0/24", .documentation), block("203.0.113.0/24", .documentation), block("224.0.0.0/4", .multicast),
        block("255.255.255.255/32", .broadcast), block("240.0.0.0/4", .reserved),
    ]

    static let v6Blocks: [Block] = [
        block("::/128", .unspecified), block("::1/128", .loopback), block("2001:2::/48", .benchmarking),
        block("2001::/23", .reserved), block("2001:db8::/32", .documentation), block("3fff::/20", .documentation),
        block("fc00::/7", .privateUse), block("fe80::/10", .linkLocal), block("fec0::/10", .privateUse), block("ff00::/8", .multicast),
    ]

    /// IPv6 prefixes followed by an IPv4 address: the prefix, its length, where the IPv4 address
    /// starts, and the form's name.
    static let embeddingV4: [(prefix: [UInt8], bits: Int, offset: Int, name: String)] = [
        (parse("::ffff:0:0")!, 96, 12, "IPv4-mapped ::ffff:0:0/96"),
        (parse("64:ff9b::")!, 96, 12, "NAT64 64:ff9b::/96"),
        (parse("2002::")!, 16, 2, "6to4 2002::/16"),
    ]

    /// The bytes of an IP address written the standard way (`192.0.2.1`, `2001:db8::1`, no
    /// brackets, no zone); nil for anything else, host names included.
    public static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }

    /// An address's text: dotted decimal, or IPv6 as RFC 5952 writes it.
    public static func text(_ address: [UInt8]) -> String {
        guard address.count == 4 || address.count == 16 else { return "(\(address.count) bytes)" }
        var buffer = [CChar](repeating: 0, count: 64)
        let family = address.count == 4 ? AF_INET : AF_INET6
        let written = address.withUnsafeBytes { bytes in
            buffer.withUnsafeMutableBufferPointer { out in
                inet_ntop(family, bytes.baseAddress, out.baseAddress, socklen_t(out.count)) != nil
            }
        }
        guard written else { return "(unprintable address)" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
