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

    /// glewlwyd writes a user's roles as one comma-separated string (it puts no arrays in a
    /// token), OAuth's `scope` is space-separated: both are read as lists; other shapes give none.
    @Test("the roles claim: an array, or one string separated by commas or spaces; other shapes give no role")
    func rolesClaimShapes() async throws {
        let authority = try await TokenAuthority(secret: Self.secret)
        let exp = JSONValue.number(Date().timeIntervalSince1970 + 60)
        let cases: [(JSONValue?, Set<String>)] = [
            (.array([.string("auditor"), .string("privacy"), .number(1)]), ["auditor", "privacy"]),
            (.string("auditor"), ["auditor"]),
            (.string("auditor,privacy"), ["auditor", "privacy"]),
            (.string("openid auditor"), ["openid", "auditor"]),
            (.string(""), []), (.string(" , "), []),
            (.number(1), []), (.object(["auditor": .bool(true)]), []), (nil, []),
        ]
        for (claim, roles) in cases {
            var values: [String: JSONValue] = ["sub": .string("alice"), "exp": exp]
            values["roles"] = claim
            let caller = try authority.caller(values)
            #expect(caller.roles == roles, "\(String(describing: claim))")
        }
        // "auditors" is not "auditor": the list is split, never searched for a substring.
        #expect(try !authority.caller(["sub": .string("alice"), "exp": exp, "roles": .string("auditors,reader")]).isAuditor)
    }
}
