import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import Testing

/// The console's sign-in through a real identity provider (issue 69): Debian's glewlwyd, set up by
/// `scripts/oidc-provider` (`OIDCProvider`), and a live ledger whose `LEDGER_OIDC_*` settings name
/// it and which takes only the provider's tokens (its JWKS, issuer and audience), driven in
/// Chromium by Console/test_signin.py. Screenshots go to .build/console-signin-screenshots (the
/// provider's login and end-session pages, the console signed in, renewed and refusing).
@Suite("Console sign-in")
struct ConsoleSignInTests {
    /// Access tokens of 40 s: the console renews 15 s early, so the expiry step waits about 25 s.
    static let tokenLifetime = 40

    @Test("via glewlwyd in Chromium: code + PKCE sign-in, list, expiry renewed, sign-out, non-auditor refused")
    func throughProvider() async throws {
        guard let python = ProcessRunner.which("python3") else { throw ScenarioError("python3 is not installed") }
        // The ledger's port first: the provider redirects to its /console.
        let port = try EmbeddedPostgres.freePort()
        try await OIDCProvider.run(redirectURI: "http://127.0.0.1:\(port)/console", tokenLifetime: Self.tokenLifetime) { provider in
            let configuration = LedgerConfiguration.testing {
                $0.port = port
                provider.configure(&$0)
            }
            try await LiveServer.run(configuration: configuration, authority: try await provider.authority()) { server in
                // An owner's collaboration for the auditor's list, written with the provider's token.
                let owner = try await provider.token("owner")
                let client = LedgerClient(baseURL: server.baseURL) { owner }
                let started = try await client.prepareCollaboration(
                    localIdentifier: "audited.doc", title: "Audited", initiator: Initiator(handle: "owner@example.com"))
                _ = try await client.members(of: started.identifier, minPosition: started.position)
                let environment = ProcessInfo.processInfo.environment.merging([
                    "LEDGER_URL": server.baseURL.absoluteString, "PROVIDER_ISSUER": provider.issuer,
                    "PROVIDER_AUDIENCE": provider.audience, "PROVIDER_LOG": provider.folder.appendingPathComponent("glewlwyd.log").path,
                    "AUDITOR_PASSWORD": provider.passwords["auditor"]!, "READER_PASSWORD": provider.passwords["reader"]!,
                    "READER_TOKEN": try await provider.token("reader"), "COLLABORATION_ID": started.identifier,
                    "TOKEN_LIFETIME": String(Self.tokenLifetime),
                    "SCREENSHOT_DIR": Repository.root.appendingPathComponent(".build/console-signin-screenshots").path,
                ]) { $1 }
                let script = Repository.root.appendingPathComponent("Tests/LedgerAPITests/Console/test_signin.py").path
                let run = try await ProcessRunner.run(python, [script], environment: environment)
                #expect(run.status == 0, "\(run.output)\nglewlwyd's log ends: \(provider.log().suffix(3000))")
                #expect(run.output.contains("ok - 5 "), "\(run.output)")
            }
        }
    }

    struct ScenarioError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
