import Foundation
import LedgerConfiguration
import Testing

/// The console's sign-in through an identity provider: its settings land in their fields, and
/// the combinations that could only fail in the browser refuse to start, naming what to set.
struct ConsoleSignInSettingsTests {
    static let provider = [
        "LEDGER_OIDC_ISSUER": "https://idp.example/realms/acme", "LEDGER_OIDC_CLIENT_ID": "ledger-console",
        "LEDGER_JWKS_URL": "https://idp.example/realms/acme/certs", "LEDGER_JWT_AUDIENCE": "ledger",
        "LEDGER_JWT_ISSUER": "https://idp.example/realms/acme",
    ]

    @Test("unset: no provider, scope openid; set: each lands in its field")
    func fields() throws {
        let plain = try LedgerConfiguration(environment: [:])
        #expect(plain.oidcIssuer == nil && plain.oidcClientID == nil && plain.oidcResource == nil && plain.oidcScope == "openid")
        var environment = Self.provider
        environment["LEDGER_OIDC_SCOPE"] = "openid api://ledger/audit"
        environment["LEDGER_OIDC_RESOURCE"] = "https://ledger.example.com/"
        let configured = try LedgerConfiguration(environment: environment)
        #expect(configured.oidcIssuer == "https://idp.example/realms/acme" && configured.oidcClientID == "ledger-console")
        #expect(configured.oidcScope == "openid api://ledger/audit" && configured.oidcResource == "https://ledger.example.com/")
    }

    @Test("issuer without client id or provider keys, scopes without openid: refused, naming the fix")
    func refusals() {
        var cases: [([String: String], [String])] = []
        var noClient = Self.provider
        noClient["LEDGER_OIDC_CLIENT_ID"] = nil
        cases.append((noClient, ["LEDGER_OIDC_ISSUER and LEDGER_OIDC_CLIENT_ID go together"]))
        cases.append((["LEDGER_OIDC_CLIENT_ID": "ledger-console"], ["LEDGER_OIDC_ISSUER and LEDGER_OIDC_CLIENT_ID go together"]))
        var noKeys = Self.provider
        noKeys["LEDGER_JWKS_URL"] = nil
        noKeys["LEDGER_JWT_AUDIENCE"] = nil
        cases.append((noKeys, ["set LEDGER_JWKS_URL to the provider's jwks_uri"]))
        var noOpenID = Self.provider
        noOpenID["LEDGER_OIDC_SCOPE"] = "profile openid-extra"
        cases.append((noOpenID, ["LEDGER_OIDC_SCOPE='profile openid-extra' lacks openid"]))
        // The provider's keys may sign for other issuers: the access tokens' own must be named.
        var noIssuer = Self.provider
        noIssuer["LEDGER_JWT_ISSUER"] = nil
        cases.append((noIssuer, ["LEDGER_OIDC_ISSUER is set but LEDGER_JWT_ISSUER is not: set LEDGER_JWT_ISSUER to the iss"]))
        var blankIssuer = Self.provider
        blankIssuer["LEDGER_JWT_ISSUER"] = " "
        cases.append((blankIssuer, ["set LEDGER_JWT_ISSUER"]))
        // The console's client id as the ledger's audience: its ID tokens would carry it too.
        var sameAudience = Self.provider
        sameAudience["LEDGER_JWT_AUDIENCE"] = "ledger-console"
        cases.append(
            (
                sameAudience,
                [
                    "LEDGER_OIDC_CLIENT_ID and LEDGER_JWT_AUDIENCE are both 'ledger-console'",
                    "Register the ledger's API with the provider separately, with an audience of its own",
                ]
            ))
        var notHTTP = Self.provider
        notHTTP["LEDGER_OIDC_ISSUER"] = "idp.example"
        cases.append((notHTTP, ["LEDGER_OIDC_ISSUER='idp.example' is not an http or https URL"]))
        for (environment, expected) in cases {
            #expect {
                _ = try LedgerConfiguration(environment: environment)
            } throws: { error in
                let text = "\(error)"
                return text.hasPrefix("refusing to start") && expected.allSatisfy(text.contains)
            }
        }
        #expect(throws: Never.self) { _ = try LedgerConfiguration(environment: Self.provider) }
    }
}
