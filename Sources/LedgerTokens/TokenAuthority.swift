import Foundation
import JWTKit
import LedgerDomain
import LedgerWire

/// The tokens the API accepts: HS256 with a shared secret (the development default, and
/// deployments without an identity provider), or an identity provider's tokens, RS256, ES256 or
/// EdDSA, checked against its published keys (`JWKSKeys`). Every refusal names its reason.
public struct TokenAuthority: Sendable {
    /// What the claims must say, and where the account and roles are.
    public struct Claims: Sendable {
        public var issuer: String?
        public var audience: String?
        public var account = "sub"
        public var roles = "roles"
        /// The one character between the roles of a roles claim written as one string
        /// (`LEDGER_JWT_ROLES_SEPARATOR`; glewlwyd joins a list with `,`); nil: only an array of
        /// strings holds roles, and a string claim gives none.
        public var rolesSeparator: Character?

        public init(
            issuer: String? = nil, audience: String? = nil, account: String = "sub", roles: String = "roles",
            rolesSeparator: Character? = nil
        ) {
            (self.issuer, self.audience, self.account, self.roles) = (issuer, audience, account, roles)
            self.rolesSeparator = rolesSeparator
        }
    }

    enum Keys {
        case secret(JWTKeyCollection)
        case provider(JWKSKeys)
    }

    let keys: Keys
    let claims: Claims
    /// Clock skew tolerated on `exp` and `nbf`.
    static let leeway: TimeInterval = 30
    /// What an identity provider may sign with.
    static let providerAlgorithms: Set<String> = ["RS256", "ES256", "EdDSA"]

    public struct WeakSecret: Error, CustomStringConvertible {
        public var description: String { "LEDGER_JWT_SECRET must be at least 32 bytes (HS256 key size)" }
    }

    /// An identity provider's keys without an audience to check: its tokens for every other
    /// application it serves would be accepted here.
    public struct MissingAudience: Error, CustomStringConvertible {
        public init() {}
        public var description: String {
            "LEDGER_JWT_AUDIENCE must be set with LEDGER_JWKS_URL or LEDGER_JWKS_FILE: the audience the identity provider issues this ledger's tokens for, so a token it issued for another application is refused"
        }
    }

    /// A token refused, and why (the 401's message); `code` is `invalid_token` but for an account
    /// in the pseudonyms' namespace (`reserved_account`).
    public struct Refusal: Error, CustomStringConvertible, Equatable {
        public var reason: String
        public var code: ErrorCode = .invalidToken
        public var description: String { reason }
    }

    /// The refusal of an account in the pseudonyms' namespace (`Caller.isReserved`).
    static let reserved = Refusal(
        reason: "the token's account begins with psn- or erased:, the namespace of pseudonyms, which no account may use",
        code: .reservedAccount)

    /// A fresh secret: 32 random bytes, hex (development secrets, throwaway ledgers).
    public static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    public init(secret: String, claims: Claims = Claims()) async throws {
        guard secret.utf8.count >= 32 else { throw WeakSecret() }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.keys = .secret(keys)
        self.claims = claims
    }

    /// Throws `MissingAudience` unless `claims` names an audience (SPEC "Authentication in
    /// production": with provider keys an audience is required).
    public init(provider: JWKSKeys, claims: Claims) throws {
        guard let audience = claims.audience, !audience.isEmpty else { throw MissingAudience() }
        self.keys = .provider(provider)
        self.claims = claims
    }

    /// Whether this authority can issue tokens (only with a shared secret).
    public var canIssue: Bool { if case .secret = keys { true } else { false } }

    /// A token for `account`; refused for an account in the pseudonyms' namespace, which the
    /// API would refuse anyway.
    public func issue(account: String, roles: [String] = [], validFor: TimeInterval = 30 * 24 * 3600) async throws -> String {
        guard !Caller.isReserved(account) else { throw Self.reserved }
        guard case .secret(let keys) = keys else {
            throw Refusal(reason: "tokens come from the identity provider (LEDGER_JWKS_URL or LEDGER_JWKS_FILE), not from the ledger")
        }
        var token = TokenClaims(values: [
            claims.account: .string(account), "exp": .number(Double(Int64(Date().timeIntervalSince1970 + validFor))),
        ])
        if !roles.isEmpty { token.values[claims.roles] = .array(roles.map(JSONValue.string)) }
        if let issuer = claims.issuer { token.values["iss"] = .string(issuer) }
        if let audience = claims.audience { token.values["aud"] = .string(audience) }
        return try await keys.sign(token)
    }

    /// `values` signed as they are with the shared secret: tests' tokens of shapes the ledger never
    /// issues (an ID token's claims, say). Refused without a secret, as `issue` is.
    func sign(_ values: [String: JSONValue]) async throws -> String {
        guard case .secret(let keys) = keys else { throw Refusal(reason: "only a shared secret signs here") }
        return try await keys.sign(TokenClaims(values: values))
    }

    /// The caller a token names, or a `Refusal` saying why not.
    public func verify(_ token: String) async throws -> Caller {
        let header = try Self.header(token)
        let collection: JWTKeyCollection
        switch keys {
        case .secret(let keys):
            guard header.alg == "HS256" else { throw Refusal(reason: "alg \(header.alg) is not accepted: this ledger takes HS256 tokens") }
            collection = keys
        case .provider(let provider):
            guard Self.providerAlgorithms.contains(header.alg) else {
                throw Refusal(
                    reason: header.alg.hasPrefix("HS")
                        ? "alg \(header.alg) is not accepted: tokens must be signed with the identity provider's keys (JWKS)"
                        : "alg \(header.alg) is not accepted: RS256, ES256 or EdDSA")
            }
            guard let kid = header.kid else { throw Refusal(reason: "the token names no key (kid)") }
            guard let keys = await provider.keys(for: kid) else { throw Refusal(reason: "unknown key id (kid) \(kid)") }
            collection = keys
        }
        let verified: TokenClaims
        do {
            verified = try await collection.verify(token, as: TokenClaims.self)
        } catch {
            throw Refusal(reason: "the signature does not verify")
        }
        return try caller(verified.values)
    }

    /// The refusal of an OpenID Connect ID token: it carries a `nonce` (the console always sends
    /// one, and the provider puts it in the ID token alone), and where the provider issues it with
    /// this ledger's audience, issuer and keys it would otherwise pass for an access token.
    static let idToken = Refusal(
        reason:
            "the token carries a nonce claim, so it is an OpenID Connect ID token (it says who signed in, not what they may do): send the access token the identity provider issued with it"
    )

    /// Checks the claims of a token whose signature verified.
    func caller(_ values: [String: JSONValue], now: Date = Date()) throws -> Caller {
        guard values["nonce"] == nil else { throw Self.idToken }
        guard case .number(let exp)? = values["exp"] else { throw Refusal(reason: "the token has no expiry (exp)") }
        guard now.timeIntervalSince1970 < exp + Self.leeway else { throw Refusal(reason: "the token expired") }
        if case .number(let nbf)? = values["nbf"], now.timeIntervalSince1970 + Self.leeway < nbf {
            throw Refusal(reason: "the token is not valid yet (nbf)")
        }
        if let issuer = claims.issuer, values["iss"] != .string(issuer) {
            throw Refusal(reason: "the token's issuer is not \(issuer)")
        }
        if let audience = claims.audience {
            let audiences: [JSONValue] = if case .array(let list)? = values["aud"] { list } else { values["aud"].map { [$0] } ?? [] }
            guard audiences.contains(.string(audience)) else { throw Refusal(reason: "the token's audience is not \(audience)") }
        }
        guard case .string(let account)? = values[claims.account], !account.isEmpty, account.count <= 256,
            !account.unicodeScalars.contains(where: { $0.value == 0 })
        else { throw Refusal(reason: "the token has no usable account in its \(claims.account) claim") }
        // Whatever claim holds it: an account that looks like a pseudonym would be matched to
        // that subject's events.
        guard !Caller.isReserved(account) else { throw Self.reserved }
        return Caller(account: account, roles: Self.roles(values[claims.roles], separator: claims.rolesSeparator))
    }

    /// The roles a claim holds: the strings of an array; or, only where `separator` is set (for
    /// providers that put no arrays in a token: glewlwyd joins a user's roles with commas), the
    /// parts of one string between that character, each taken exactly as written (nothing
    /// trimmed, never a substring search). Anything else, and a string without a separator: none.
    static func roles(_ claim: JSONValue?, separator: Character?) -> Set<String> {
        switch claim {
        case .array(let list)?:
            var roles: Set<String> = []
            for case .string(let role) in list { roles.insert(role) }
            return roles
        case .string(let text)?:
            guard let separator else { return [] }
            return Set(text.split(separator: separator).map(String.init))
        default:
            return []
        }
    }

    /// The token's header, read before any key is chosen: its algorithm and key id.
    static func header(_ token: String) throws -> (alg: String, kid: String?) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Data(base64URL: String(parts[0])),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: data)
        else { throw Refusal(reason: "not a JWT (header.payload.signature)") }
        guard case .string(let alg)? = header["alg"], alg.lowercased() != "none" else {
            throw Refusal(reason: "alg none is not accepted: tokens must be signed")
        }
        if case .string(let kid)? = header["kid"] { return (alg, kid) }
        return (alg, nil)
    }
}

/// A token's claims, all of them: which hold the account and the roles is configuration, and
/// `TokenAuthority.caller` checks them once the signature has verified.
struct TokenClaims: JWTPayload {
    var values: [String: JSONValue]

    init(values: [String: JSONValue]) { self.values = values }
    init(from decoder: any Decoder) throws { values = try [String: JSONValue](from: decoder) }
    func encode(to encoder: any Encoder) throws { try values.encode(to: encoder) }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension Data {
    /// Base64url without padding (RFC 7515), as JWTs carry their parts.
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
