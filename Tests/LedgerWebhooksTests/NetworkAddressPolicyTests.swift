import LedgerWebhooks
import Testing

/// The classifier of webhook addresses, table-tested: every class of non-public address, the
/// edges of the ranges, IPv6 forms that carry an IPv4 address, and public addresses that pass.
@Suite("Network address policy")
struct NetworkAddressPolicyTests {
    typealias Kind = NetworkAddressPolicy.Kind

    static let nonPublic: [(String, Kind)] = [
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
        ("10.0.0.1", .privateUse), ("10.255.255.255", .privateUse),
        ("172.16.0.1", .privateUse), ("172.31.255.255", .privateUse),
        ("192.168.1.1", .privateUse),
        ("169.254.169.254", .linkLocal),
        ("100.64.0.1", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .reserved),
        ("255.255.255.255", .broadcast), ("224.0.0.1", .multicast), ("239.255.255.250", .multicast),
        ("192.0.2.1", .documentation), ("198.51.100.7", .documentation), ("203.0.113.9", .documentation),
        ("198.18.0.1", .benchmarking), ("198.19.255.255", .benchmarking),
        ("192.0.0.8", .reserved), ("240.0.0.1", .reserved),
        ("::1", .loopback), ("::", .unspecified),
        ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("fc00::1", .privateUse), ("fd12:3456::1", .privateUse), ("fec0::1", .privateUse),
        ("ff02::1", .multicast),
        ("2001:db8::1", .documentation), ("3fff::1", .documentation), ("2001:2::1", .benchmarking),
        ("2001::1", .reserved), ("100::1", .reserved), ("::127.0.0.1", .reserved), ("64:ff9b:1::1", .reserved),
        // IPv6 that reaches an IPv4 address is judged by that address.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.0.0.1", .privateUse), ("::ffff:169.254.169.254", .linkLocal),
        ("::ffff:0.0.0.0", .unspecified), ("64:ff9b::7f00:1", .loopback), ("2002:c0a8:101::1", .privateUse),
    ]

    static let publicAddresses = [
        "8.8.8.8", "1.1.1.1", "93.184.215.14", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "192.169.0.1",
        "169.255.0.1", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450:4001:81b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808",
        "2002:808:808::1",
    ]

    @Test("every class of non-public address is refused, named with its range; public IPv4 and IPv6 pass")
    func classes() throws {
        for (text, kind) in Self.nonPublic {
            let address = try #require(NetworkAddressPolicy.parse(text), "\(text)")
            let refusal = NetworkAddressPolicy.nonPublic(address)
            #expect(refusal?.kind == kind, "\(text): \(String(describing: refusal))")
            #expect(refusal.map { "\($0)".hasPrefix(kind.rawValue + " (") } == true, "\(text): \(String(describing: refusal))")
        }
        for text in Self.publicAddresses {
            let address = try #require(NetworkAddressPolicy.parse(text), "\(text)")
            #expect(NetworkAddressPolicy.nonPublic(address) == nil, "\(text)")
        }
    }

    @Test("the refusal names the range, and for an IPv4-mapped address the IPv4 range it reaches")
    func naming() throws {
        let loopback = NetworkAddressPolicy.nonPublic(try #require(NetworkAddressPolicy.parse("127.0.0.1")))
        #expect(loopback?.description == "loopback (127.0.0.0/8)")
        let mapped = NetworkAddressPolicy.nonPublic(try #require(NetworkAddressPolicy.parse("::ffff:127.0.0.1")))
        #expect(mapped?.description == "loopback (127.0.0.0/8 as IPv4-mapped ::ffff:0:0/96)")
        let outside = NetworkAddressPolicy.nonPublic(try #require(NetworkAddressPolicy.parse("100::1")))
        #expect(outside?.description == "reserved (outside global unicast 2000::/3)")
        #expect(NetworkAddressPolicy.nonPublic([1, 2, 3])?.kind == .reserved, "neither 4 nor 16 bytes")
    }

    @Test("only standard IP literals parse (no names, brackets, short forms or zones); text writes them back")
    func parsing() throws {
        for text in ["localhost", "example.com", "[::1]", "127.1", "2130706433", "0x7f.0.0.1", "fe80::1%eth0", "", "1.2.3.4.5"] {
            #expect(NetworkAddressPolicy.parse(text) == nil, "\(text)")
        }
        #expect(NetworkAddressPolicy.parse("192.0.2.1") == [192, 0, 2, 1])
        for text in ["192.0.2.1", "2001:db8::1", "::1", "::", "fe80::1", "0.0.0.0"] {
            #expect(NetworkAddressPolicy.text(try #require(NetworkAddressPolicy.parse(text))) == text)
        }
    }

    /// A destination is checked without the network: IP literals directly, localhost through the
    /// resolver (the hosts file); refusals name the host, the address and its class; allowed,
    /// nothing is resolved.
    @Test("a destination is checked without the network: literals directly, localhost by the hosts file")
    func destinations() async throws {
        // Each with what its refusal must say (localhost may resolve to ::1 too, in either order).
        let refused: [(String, [String])] = [
            ("http://127.0.0.1:8080/hook", ["url's host 127.0.0.1 is loopback (127.0.0.0/8)"]),
            ("http://[::1]:8080/hook", ["url's host ::1 is loopback (::1/128)"]),
            ("https://[::ffff:10.1.2.3]/hook", ["is private (10.0.0.0/8 as IPv4-mapped ::ffff:0:0/96)"]),
            ("https://169.254.169.254/latest/meta-data", ["is link-local (169.254.0.0/16)"]),
            ("http://localhost:8080/hook", ["url's host localhost resolves to ", "loopback ("]),
            // Not a standard literal: the resolver reads it as 127.0.0.1, and so would a connection.
            ("http://127.1:8080/hook", ["127.0.0.1", "loopback (127.0.0.0/8)"]),
        ]
        for (url, reasons) in refused {
            do {
                let destination = try await WebhookDestination.check(url: url, allowPrivate: false)
                Issue.record("\(url) accepted: \(destination)")
            } catch let refusal as WebhookDestination.Refused {
                for reason in reasons + ["LEDGER_WEBHOOKS_ALLOW_PRIVATE"] {
                    #expect(refusal.description.contains(reason), "\(url): \(refusal)")
                }
            }
        }
        // A public literal needs no lookup, and nothing needs pinning: the URL says where.
        #expect(try await WebhookDestination.check(url: "https://8.8.8.8/hook", allowPrivate: false).address == nil)
        let allowed = try await WebhookDestination.check(url: "http://localhost:8080/hook", allowPrivate: true)
        #expect(allowed.host == "localhost" && allowed.address == nil)
        #expect(try await WebhookDestination.check(url: "http://[::1]:8080/hook", allowPrivate: true).host == "::1")
    }
}
