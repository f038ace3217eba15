import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import LedgerConfiguration
import LedgerDomain
import LedgerTestSupport
import LedgerWire
import Logging
import NIOCore
import Synchronization
import Testing
import _CryptoExtras

@testable import LedgerAPI
@testable import LedgerTokens

/// Tokens from an identity provider, through the real auth middleware: RS256, ES256 and EdDSA
/// keys published as a JWKS (a file, or served over loopback HTTP and rotated), and every refusal.
@Suite("Identity-provider tokens")
struct TokenTests {
    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A provider's keys (kids `<prefix>-rs`, `-es`, `-ed`): what it signs with, and its public JWKS.
    struct Provider {
        let signing = JWTKeyCollection()
        var jwks: [JWK] = []

        static func make(_ prefix: String) async throws -> Provider {
            var provider = Provider()
            let rsa = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
            let (modulus, exponent) = try rsa.publicKey.getKeyPrimitives()
            await provider.signing.add(rsa: rsa, digestAlgorithm: .sha256, kid: JWKIdentifier(string: "\(prefix)-rs"))
            provider.jwks.append(
                .rsa(.rs256, identifier: JWKIdentifier(string: "\(prefix)-rs"), modulus: base64URL(modulus), exponent: base64URL(exponent)))
            let ec = ES256PrivateKey()
            let point = try #require(ec.publicKey.parameters)
            await provider.signing.add(ecdsa: ec, kid: JWKIdentifier(string: "\(prefix)-es"))
            provider.jwks.append(.ecdsa(.es256, identifier: JWKIdentifier(string: "\(prefix)-es"), x: point.x, y: point.y, curve: .p256))
            let ed = try EdDSA.PrivateKey()
            await provider.signing.add(eddsa: ed, kid: JWKIdentifier(string: "\(prefix)-ed"))
            provider.jwks.append(
                .octetKeyPair(
                    .eddsa, identifier: JWKIdentifier(string: "\(prefix)-ed"), x: base64URL(ed.publicKey.rawRepresentation), y: nil,
                    curve: .ed25519))
            return provider
        }

        var json: Data { try! JSONEncoder().encode(JWKS(keys: jwks)) }

        func token(_ kid: String, _ claims: [String: JSONValue]) async throws -> String {
            try await signing.sign(TokenClaims(values: claims), kid: JWKIdentifier(string: kid))
        }
    }

    static let claims = TokenAuthority.Claims(issuer: "https://idp.example", audience: "ledger-app", account: "email", roles: "groups")

    /// Claims a provider would issue for alice, valid for an hour, with `change` applied.
    static func aliceClaims(_ change: (inout [String: JSONValue]) -> Void = { _ in }) -> [String: JSONValue] {
        let now = Date().timeIntervalSince1970
        var values: [String: JSONValue] = [
            "email": .string("alice@example.com"), "groups": .array([.string("auditor")]), "iss": .string("https://idp.example"),
            "aud": .array([.string("other-app"), .string("ledger-app")]), "exp": .number(now + 3600), "nbf": .number(now - 60),
        ]
        change(&values)
        return values
    }

    /// The real middleware in front of one route that names the caller.
    static func whoami(_ authority: TokenAuthority, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let router = Router(context: LedgerRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.group("v1").add(middleware: AuthMiddleware(authority: authority)).get("whoami") { _, context -> String in
            let caller = try context.requireCaller()
            return "\(caller.account) \(caller.roles.sorted().joined(separator: ","))"
        }
        try await Application(router: router).test(.router, body)
    }

    static func call(_ client: any TestClientProtocol, _ token: String) async throws -> (HTTPResponse.Status, String) {
        let response = try await client.execute(uri: "/v1/whoami", method: .get, headers: [.authorization: "Bearer \(token)"])
        return (response.status, String(buffer: response.body))
    }

    @Test("RS256, ES256 and EdDSA tokens against a JWKS file accepted, account and roles from the claims")
    func acceptsProviderTokens() async throws {
        let provider = try await Provider.make("k1")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString.prefix(8)).json")
        try provider.json.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let authority = try await TokenAuthority(provider: JWKSKeys(.file(file.path)), claims: Self.claims)
        #expect(!authority.canIssue)
        try await Self.whoami(authority) { client in
            for kid in ["k1-rs", "k1-es", "k1-ed"] {
                let (status, body) = try await Self.call(client, try await provider.token(kid, Self.aliceClaims()))
                #expect(status == .ok && body == "alice@example.com auditor", "\(kid): \(status) \(body)")
            }
        }
    }

    /// Refused with 401 and the reason: alg none, HS256 where only JWKS is configured (algorithm
    /// confusion), no kid, an unknown kid, a bad signature, wrong issuer, wrong audience, expired,
    /// not yet valid, no expiry, no account.
    @Test("provider tokens refused 401 with the reason: alg none, algorithm confusion, kid, signature, claims")
    func refusals() async throws {
        let provider = try await Provider.make("k1")
        let stranger = try await Provider.make("k1")  // the same kids, other keys: forged signatures
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString.prefix(8)).json")
        try provider.json.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let authority = try await TokenAuthority(provider: JWKSKeys(.file(file.path)), claims: Self.claims)
        let payload = Self.base64URL(try JSONEncoder().encode(Self.aliceClaims()))
        // HS256 keyed with what an attacker can read: the provider's public RSA key.
        let confused = JWTKeyCollection()
        await confused.add(hmac: HMACKey(from: String(decoding: provider.json, as: UTF8.self)), digestAlgorithm: .sha256, kid: "k1-rs")
        let noKid = JWTKeyCollection()
        await noKid.add(ecdsa: ES256PrivateKey())
        let cases: [(String, String)] = [
            (Self.base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + payload + ".", "alg none"),
            (try await confused.sign(TokenClaims(values: Self.aliceClaims()), kid: "k1-rs"), "alg HS256 is not accepted"),
            (try await noKid.sign(TokenClaims(values: Self.aliceClaims())), "names no key"),
            (try await stranger.token("k1-es", Self.aliceClaims()), "signature"),
            (try await Self.unknownKid(), "unknown key id"),
            (try await provider.token("k1-ed", Self.aliceClaims { $0["iss"] = .string("https://evil.example") }), "issuer"),
            (try await provider.token("k1-rs", Self.aliceClaims { $0["aud"] = .string("other-app") }), "audience"),
            (try await provider.token("k1-es", Self.aliceClaims { $0["exp"] = .number(Date().timeIntervalSince1970 - 3600) }), "expired"),
            (
                try await provider.token("k1-ed", Self.aliceClaims { $0["nbf"] = .number(Date().timeIntervalSince1970 + 3600) }),
                "not valid yet"
            ),
            (try await provider.token("k1-rs", Self.aliceClaims { $0["exp"] = nil }), "no expiry"),
            (try await provider.token("k1-es", Self.aliceClaims { $0["email"] = nil }), "no usable account"),
            ("not.a-jwt", "not a JWT"),
        ]
        try await Self.whoami(authority) { client in
            for (token, reason) in cases {
                let (status, body) = try await Self.call(client, token)
                #expect(status == .unauthorized && body.contains(reason), "expected \(reason): \(status) \(body)")
            }
        }
    }

    static func unknownKid() async throws -> String {
        let other = JWTKeyCollection()
        await other.add(ecdsa: ES256PrivateKey(), kid: "k9-es")
        return try await other.sign(TokenClaims(values: aliceClaims()), kid: "k9-es")
    }

    /// A JWKS served over loopback HTTP: keys rotated by the provider are picked up without a
    /// restart, and unknown kids refetch at most once per interval.
    @Test("JWKS over HTTP: rotated keys picked up without a restart, unknown kids refetched once an interval")
    func rotation() async throws {
        let (first, second) = (try await Provider.make("v1"), try await Provider.make("v2"))
        let served = Mutex(first.json)
        let fetches = Mutex(0)
        let router = Router()
        router.get("jwks.json") { _, _ -> Response in
            fetches.withLock { $0 += 1 }
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: served.withLock { $0 }))
            )
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { live in
            let url = "http://127.0.0.1:\(live.port!)/jwks.json"
            let eager = try await TokenAuthority(provider: JWKSKeys(.url(url), refreshInterval: .zero), claims: Self.claims)
            let patient = try await TokenAuthority(provider: JWKSKeys(.url(url)), claims: Self.claims)  // once a minute
            #expect(fetches.withLock { $0 } == 2, "each fetched at start")
            try await Self.whoami(eager) { client in
                #expect(try await Self.call(client, try await first.token("v1-es", Self.aliceClaims())).0 == .ok)
                served.withLock { $0 = second.json }  // the provider rotates
                let (status, body) = try await Self.call(client, try await second.token("v2-ed", Self.aliceClaims()))
                #expect(status == .ok, "the new kid is fetched: \(body)")
                #expect(
                    try await Self.call(client, try await first.token("v1-es", Self.aliceClaims())).0 == .unauthorized,
                    "the old key is gone")
            }
            let before = fetches.withLock { $0 }
            try await Self.whoami(patient) { client in
                for _ in 0..<3 {
                    let (status, body) = try await Self.call(client, try await second.token("v2-rs", Self.aliceClaims()))
                    #expect(status == .unauthorized && body.contains("unknown key id"))
                }
            }
            #expect(fetches.withLock { $0 } == before, "no refetch within the interval")
        }
    }

    /// Accounts in the pseudonyms' namespace, and near misses that are ordinary accounts.
    static let reservedAccounts = [
        "psn-0b6f5c1e-8d1a-4b7e-9c2f-3a4d5e6f7a8b", "erased:psn-0b6f5c1e-8d1a-4b7e-9c2f-3a4d5e6f7a8b", "PSN-0B6F5C1E", "Erased:psn-x",
        "pSn-", "ERASED:",
    ]
    static let nearMisses = ["psnx@example.com", "alice-psn-1", "psn@example.com", "erased@example.com", " psn-x"]

    /// An HS256 token for `account` signed with `secret` directly (the authority issues none for a reserved account).
    static func hs256(_ secret: String, account: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(TokenClaims(values: ["sub": .string(account), "exp": .number(Date().timeIntervalSince1970 + 3600)]))
    }

    /// An account beginning with psn- or erased: (any case) is refused with 401 reserved_account,
    /// from HS256 tokens and from a provider's whichever claim holds it; near misses pass; the
    /// secret issues no such token.
    @Test("accounts beginning psn- or erased: (any case) refused 401 reserved_account from every token")
    func reservedAccounts() async throws {
        let secret = String(repeating: "r", count: 40)
        let shared = try await TokenAuthority(secret: secret)
        try await Self.whoami(shared) { client in
            for account in Self.reservedAccounts {
                let (status, body) = try await Self.call(client, try await Self.hs256(secret, account: account))
                #expect(status == .unauthorized && body.contains("reserved_account"), "\(account): \(status) \(body)")
            }
            for account in Self.nearMisses {
                let (status, body) = try await Self.call(client, try await Self.hs256(secret, account: account))
                #expect(status == .ok && body.hasPrefix(account + " "), "\(account): \(status) \(body)")
            }
        }
        for account in Self.reservedAccounts {
            do {
                _ = try await shared.issue(account: account)
                Issue.record("a token was issued for \(account)")
            } catch let refusal as TokenAuthority.Refusal {
                #expect(refusal.code == .reservedAccount)
            }
        }
        let provider = try await Provider.make("k1")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString.prefix(8)).json")
        try provider.json.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for claim in ["email", "preferred_username"] {
            var claims = Self.claims
            claims.account = claim
            let authority = try await TokenAuthority(provider: JWKSKeys(.file(file.path)), claims: claims)
            try await Self.whoami(authority) { client in
                for (n, account) in Self.reservedAccounts.enumerated() {
                    let kid = ["k1-rs", "k1-es", "k1-ed"][n % 3]
                    let token = try await provider.token(kid, Self.aliceClaims { $0[claim] = .string(account) })
                    let (status, body) = try await Self.call(client, token)
                    #expect(status == .unauthorized && body.contains("reserved_account"), "\(claim) \(account): \(status) \(body)")
                }
                let (status, body) = try await Self.call(
                    client, try await provider.token("k1-es", Self.aliceClaims { $0[claim] = .string("psnx@example.com") }))
                #expect(status == .ok && body.hasPrefix("psnx@example.com "), "\(claim): \(status) \(body)")
            }
        }
    }

    @Test("provider keys without an audience refused: no authority made, the error names LEDGER_JWT_AUDIENCE")
    func audienceRequired() async throws {
        let provider = try await Provider.make("k1")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString.prefix(8)).json")
        try provider.json.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let keys = try await JWKSKeys(.file(file.path))
        for audience in [nil, ""] as [String?] {
            #expect(throws: TokenAuthority.MissingAudience.self) {
                try TokenAuthority(provider: keys, claims: .init(issuer: "https://idp.example", audience: audience))
            }
        }
        #expect("\(TokenAuthority.MissingAudience())".contains("LEDGER_JWT_AUDIENCE"))
    }

    @Test("HS256 stays the default: the secret's own tokens are accepted, a provider-signed one is refused")
    func sharedSecret() async throws {
        let authority = try await TokenAuthority(secret: String(repeating: "s", count: 40))
        let provider = try await Provider.make("k1")
        try await Self.whoami(authority) { client in
            let (status, body) = try await Self.call(client, try await authority.issue(account: "devin", roles: ["auditor"]))
            #expect(status == .ok && body == "devin auditor")
            let refused = try await Self.call(client, try await provider.token("k1-rs", Self.aliceClaims()))
            #expect(refused.0 == .unauthorized && refused.1.contains("takes HS256"))
        }
    }
}
