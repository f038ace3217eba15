import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a webhook's events go, checked (SPEC "Change feed and webhooks"): the URL's host
/// resolved, and every address it resolves to public (`NetworkAddressPolicy`) unless non-public
/// ones are allowed (`LEDGER_WEBHOOKS_ALLOW_PRIVATE`). Checked at registration and again before
/// each batch a delivery worker sends; the batch's connections then go to `address`, the address
/// checked, not to whatever the name resolves to a moment later (a DNS answer that changes
/// between the check and the connection cannot point a delivery into the operator's network).
public struct WebhookDestination: Sendable, Equatable {
    /// The URL's host as the HTTP client reads it (an IPv6 literal without its brackets).
    public var host: String
    /// The checked address the connections go to, when the host is a name; nil for an IP
    /// literal (the URL already says where) and where non-public addresses are allowed.
    public var address: String?

    /// Why a URL's host may not be reached.
    public struct Refused: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// Resolves and checks the host of `url` (an absolute http or https URL). getaddrinfo blocks,
    /// so it runs on NIO's thread pool for blocking work, neither on an event loop nor on the
    /// cooperative pool; a host that does not resolve is refused too.
    public static func check(url: String, allowPrivate: Bool) async throws -> WebhookDestination {
        // The host as AsyncHTTPClient reads it (Foundation's URL), so `address` replaces exactly it.
        guard let raw = URL(string: url)?.host, !raw.isEmpty else { throw Refused(description: "url has no host") }
        let host = raw.hasPrefix("[") && raw.hasSuffix("]") ? String(raw.dropFirst().dropLast()) : raw
        if allowPrivate { return WebhookDestination(host: host, address: nil) }
        if let literal = NetworkAddressPolicy.parse(host) {
            if let refusal = NetworkAddressPolicy.nonPublic(literal) {
                throw Refused(description: "url's host \(host) is \(refusal)\(Self.onlyPublic)")
            }
            return WebhookDestination(host: host, address: nil)
        }
        let addresses = try await NIOThreadPool.singleton.runIfActive { try Self.resolve(host) }
        for address in addresses {
            if let refusal = NetworkAddressPolicy.nonPublic(address) {
                throw Refused(
                    description: "url's host \(host) resolves to \(NetworkAddressPolicy.text(address)), \(refusal)\(Self.onlyPublic)")
            }
        }
        guard let first = addresses.first else { throw Refused(description: "url's host \(host) resolves to no address") }
        return WebhookDestination(host: host, address: NetworkAddressPolicy.text(first))
    }

    static let onlyPublic = "; webhooks reach public addresses only (LEDGER_WEBHOOKS_ALLOW_PRIVATE=yes lifts this, for development)"

    /// The HTTP client's settings for a batch of deliveries: redirects not followed (the
    /// registered URL is where events go, and a redirect would skip the check) and the host
    /// pinned to the checked address (`dnsOverride`: TLS still checks the certificate for the host).
    public var clientConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10)))
        if let address { configuration.dnsOverride = [host: address] }
        return configuration
    }

    /// Every distinct IPv4 and IPv6 address `host` resolves to, in the resolver's order
    /// (blocking: run it on a thread pool).
    static func resolve(_ host: String) throws -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            throw Refused(description: "url's host \(host) does not resolve (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var next = list
        while let entry = next {
            next = entry.pointee.ai_next
            guard let socketAddress = entry.pointee.ai_addr else { continue }
            let bytes: [UInt8]
            switch entry.pointee.ai_family {
            case AF_INET:
                bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafeBytes(of: v4.pointee.sin_addr) { Array($0) }
                }
            case AF_INET6:
                bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) }
                }
            default:
                continue
            }
            if !addresses.contains(bytes) { addresses.append(bytes) }
        }
        return addresses
    }
}
