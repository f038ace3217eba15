import Foundation
import LedgerDomain
import LedgerWire
import Testing

@testable import LedgerTokens

/// The authority alone, no HTTP: what it issues with the deployment's secret verifies to the same
/// caller, and every refusal names its reason (the router's 401s are `TokenTests`).
struct TokenAuthorityTests {
    static let secret = String(repeating: "s", count: 32)

    @Test("a token issued with the secret verifies to its account and roles")
    func issuedVerifies() async throws {
        let authority = try await TokenAuthority(secret: Self.secret)
        let token = try await authority.issue(account: "alice", roles: ["auditor"])
        let caller = try await authority.verify(token)
        #expect(caller == Caller(account: "alice", roles: ["auditor"]))
        #expect(caller.isAuditor)
    }

    @Test("a secret shorter than HS256's key size is refused")
    func weakSecret() async throws {
        await #expect(throws: TokenAuthority.WeakSecret.self) { try await TokenAuthority(secret: String(repeating: "s", count: 31)) }
    }

    @Test("another secret's, expired, mangled or reserved-account tokens are refused, each with its reason")
    func refusals() async throws {
        let authority = try await TokenAuthority(secret: Self.secret)
        let other = try await TokenAuthority(secret: String(repeating: "t", count: 32))
        // Past the leeway on `exp` (30 s).
        let cases: [(String, String)] = [
            (try await other.issue(account: "alice"), "the signature does not verify"),
            (try await authority.issue(account: "alice", validFor: -120), "the token expired"),
            ("not.a.token", "not a JWT (header.payload.signature)"),
            ("", "not a JWT (header.payload.signature)"),
        ]
        for (token, reason) in cases {
            do {
                _ = try await authority.verify(token)
                Issue.record("accepted: \(token)")
            } catch let refusal as TokenAuthority.Refusal {
                #expect(refusal.reason == reason)
                #expect(refusal.code == .invalidToken)
            }
        }
        do {
            _ = try await authority.issue(account: "psn-0123")
            Issue.record("an account in the pseudonyms' namespace was issued a token")
        } catch let refusal as TokenAuthority.Refusal {
            #expect(refusal.code == .reservedAccount)
        }
    }

    @Test("the claims say where the account is: a token whose configured claim is missing is refused")
    func configuredClaims() async throws {
        let authority = try await TokenAuthority(secret: Self.secret, claims: .init(account: "email"))
        let token = try await authority.issue(account: "alice@example.com")
        #expect(try await authority.verify(token).account == "alice@example.com")
        let plain = try await TokenAuthority(secret: Self.secret)
        do {
            _ = try await plain.verify(token)
            Issue.record("a token without a sub claim was accepted")
        } catch let refusal as TokenAuthority.Refusal {
            #expect(refusal.reason == "the token has no usable account in its sub claim")
        }
    }

    /// A roles claim written as one string is read only where a separator is configured
    /// (`LEDGER_JWT_ROLES_SEPARATOR`), split on that one character alone, each part taken exactly:
    /// without one, only an array holds roles, as every provider but glewlwyd writes them.
    @Test("the roles claim: an array, or one string split exactly on the configured separator; else no role")
    func rolesClaimShapes() async throws {
        let exp = JSONValue.number(Date().timeIntervalSince1970 + 60)
        let array = JSONValue.array([.string("auditor"), .string("privacy"), .number(1)])
        let cases: [(Character?, JSONValue?, Set<String>)] = [
            (nil, array, ["auditor", "privacy"]), (",", array, ["auditor", "privacy"]),
            // No separator: a string gives no role, whatever it says.
            (nil, .string("auditor"), []), (nil, .string("auditor,privacy"), []), (nil, .string("not auditor"), []),
            (",", .string("auditor"), ["auditor"]), (",", .string("auditor,privacy"), ["auditor", "privacy"]),
            // Only the separator splits: "not auditor" is one role, and nothing is trimmed.
            (",", .string("not auditor"), ["not auditor"]), (",", .string("reader, auditor"), ["reader", " auditor"]),
            (" ", .string("openid auditor"), ["openid", "auditor"]), (" ", .string("auditor,privacy"), ["auditor,privacy"]),
            (",", .string(""), []), (",", .string(",,"), []),
            (",", .number(1), []), (",", .object(["auditor": .bool(true)]), []), (",", nil, []),
        ]
        for (separator, claim, roles) in cases {
            let authority = try await TokenAuthority(secret: Self.secret, claims: .init(rolesSeparator: separator))
            var values: [String: JSONValue] = ["sub": .string("alice"), "exp": exp]
            values["roles"] = claim
            let caller = try authority.caller(values)
            #expect(caller.roles == roles, "separator \(String(describing: separator)), claim \(String(describing: claim))")
        }
        // "auditors" is not "auditor": the list is split, never searched for a substring.
        let commas = try await TokenAuthority(secret: Self.secret, claims: .init(rolesSeparator: ","))
        #expect(try !commas.caller(["sub": .string("alice"), "exp": exp, "roles": .string("auditors,reader")]).isAuditor)
    }

    /// An ID token has the audience, issuer and keys of the access tokens where the console's client
    /// id is the ledger's audience, and a roles claim too: its nonce gives it away, whatever else
    /// it carries, and the 401 says which token to send instead.
    @Test("a token with a nonce claim (an OpenID Connect ID token) is refused, saying to send the access token")
    func idTokenRefused() async throws {
        let authority = try await TokenAuthority(secret: Self.secret, claims: .init(audience: "ledger-console"))
        let exp = JSONValue.number(Date().timeIntervalSince1970 + 60)
        let claims: [String: JSONValue] = [
            "sub": .string("alice"), "exp": exp, "aud": .string("ledger-console"), "roles": .array([.string("auditor")]),
        ]
        #expect(try authority.caller(claims).isAuditor)
        for nonce in [JSONValue.string("n-0S6_WzA2Mj"), .string(""), .null] {
            var idToken = claims
            idToken["nonce"] = nonce
            #expect(throws: TokenAuthority.Refusal.self) { try authority.caller(idToken) }
        }
        // Signed with the deployment's own key, verified end to end: the refusal is the 401's reason.
        var signed = claims
        signed["nonce"] = .string("n-0S6_WzA2Mj")
        let token = try await authority.sign(signed)
        #expect(try await authority.verify(try await authority.sign(claims)).isAuditor)
        do {
            _ = try await authority.verify(token)
            Issue.record("an ID token was accepted as an access token")
        } catch let refusal as TokenAuthority.Refusal {
            #expect(refusal.code == .invalidToken)
            #expect(
                refusal.reason.contains("nonce") && refusal.reason.contains("ID token") && refusal.reason.contains("send the access token"))
        }
    }
}
