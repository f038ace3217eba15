import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1

/// An identity provider's public keys (a JWKS, RFC 7517): from a file read at start, or from
/// a URL fetched at start and again when a token names a key id it does not hold (the
/// provider rotated its keys), at most once per `refreshInterval`, so tokens with made-up key
/// ids cannot make the ledger hammer the provider. jwt-kit reads only asymmetric keys (RSA,
/// EC, OKP): a set holding a symmetric one is refused whole.
public actor JWKSKeys {
    public enum Source: Sendable {
        case file(String)
        case url(String)
    }

    let source: Source
    let refreshInterval: Duration
    private var keys = JWTKeyCollection()
    private var kids: Set<String> = []
    private var fetched: ContinuousClock.Instant?

    public struct Unusable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Loads the keys once; throws (naming the source) if they cannot be read or hold no usable key.
    public init(_ source: Source, refreshInterval: Duration = .seconds(60)) async throws {
        self.source = source
        self.refreshInterval = refreshInterval
        try await load()
        guard !kids.isEmpty else { throw Unusable(description: "\(Self.name(source)) holds no key with a kid") }
    }

    /// The keys, if they hold `kid` (refreshed first from a URL when they do not and may be).
    func keys(for kid: String) async -> JWTKeyCollection? {
        if kids.contains(kid) { return keys }
        guard case .url = source, fetched.map({ ContinuousClock.now - $0 >= refreshInterval }) ?? true else { return nil }
        try? await load()
        return kids.contains(kid) ? keys : nil
    }

    private func load() async throws {
        fetched = ContinuousClock.now
        let data: Data
        switch source {
        case .file(let path):
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        case .url(let url):
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            guard response.status.code == 200 else { throw Unusable(description: "\(url) answered \(response.status.code)") }
            data = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
        }
        let set = try JSONDecoder().decode(JWKS.self, from: data)
        let usable = set.keys.filter { $0.keyIdentifier != nil }
        let collection = JWTKeyCollection()
        try await collection.add(jwks: JWKS(keys: usable))
        (keys, kids) = (collection, Set(usable.compactMap { $0.keyIdentifier?.string }))
    }

    public static func name(_ source: Source) -> String {
        switch source {
        case .file(let path): "LEDGER_JWKS_FILE \(path)"
        case .url(let url): "LEDGER_JWKS_URL \(url)"
        }
    }
}
