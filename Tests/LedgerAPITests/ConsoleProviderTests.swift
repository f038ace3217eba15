import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerConfiguration
import LedgerDomain
import Testing

@testable import LedgerAPI

/// How the console learns where to sign in, without a browser: `GET /console/provider.json`, and
/// the policy every console file carries, which lets the page fetch from the provider's origin
/// (its discovery document and token endpoint) and from nowhere else but the ledger.
@Suite("Console provider")
struct ConsoleProviderTests {
    static func console(_ provider: ConsoleProvider?, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let router = Router(context: LedgerRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        ConsoleController(provider: provider).addRoutes(to: router)
        try await Application(router: router).test(.router, body)
    }

    static func provider(_ issuer: String, resource: String? = nil) throws -> ConsoleProvider {
        var configuration = LedgerConfiguration()
        configuration.oidcIssuer = issuer
        configuration.oidcClientID = "ledger-console"
        configuration.oidcResource = resource
        return try #require(ConsoleProvider(configuration))
    }

    @Test("without a provider: provider.json is null; the policy allows this ledger alone, no base, own forms")
    func none() async throws {
        #expect(ConsoleProvider(LedgerConfiguration()) == nil)
        try await Self.console(nil) { client in
            let document = try await client.execute(uri: "/console/provider.json", method: .get)
            #expect(document.status == .ok && String(buffer: document.body) == #"{"provider":null}"#)
            #expect(document.headers[.cacheControl] == "no-store")
            for uri in ["/console", "/console/console.js", "/console/provider.json"] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(
                    response.headers[HTTPField.Name("Content-Security-Policy")!]
                        == "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'", "\(uri)")
            }
        }
    }

    @Test("with a provider: provider.json names it; each file's policy adds its origin to connect-src")
    func configured() async throws {
        let provider = try Self.provider("http://127.0.0.1:4593/api/oidc", resource: "https://ledger.example.com/")
        try await Self.console(provider) { client in
            let document = try await client.execute(uri: "/console/provider.json", method: .get)
            #expect(
                String(buffer: document.body)
                    == #"{"provider":{"clientId":"ledger-console","issuer":"http://127.0.0.1:4593/api/oidc","resource":"https://ledger.example.com/","scope":"openid"}}"#
            )
            let policy =
                "default-src 'self'; connect-src 'self' http://127.0.0.1:4593; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
            for uri in ["/console", "/console/oidc.js", "/console/signin.js", "/console/provider.json", "/favicon.ico"] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .ok && response.headers[HTTPField.Name("Content-Security-Policy")!] == policy, "\(uri)")
            }
            // The page itself is still served under its own path only.
            #expect(try await client.execute(uri: "/console/console.html", method: .get).status == .notFound)
        }
    }

    @Test("the origin the policy names: scheme, host and port of the issuer, its path dropped")
    func origins() throws {
        let cases = [
            ("https://login.microsoftonline.com/0f4a-tenant/v2.0", "https://login.microsoftonline.com"),
            ("https://IdP.Example:8443/realms/acme", "https://idp.example:8443"),
            ("http://[::1]:4593/api/oidc", "http://[::1]:4593"),
            ("https://acme.okta.com/oauth2/default", "https://acme.okta.com"),
        ]
        for (issuer, origin) in cases { #expect(try Self.provider(issuer).origin == origin, "\(issuer)") }
    }
}
