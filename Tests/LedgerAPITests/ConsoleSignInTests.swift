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
/// The ledger checks the provider's tokens as `LEDGER_JWT_ROLES_SEPARATOR=,` would have it:
/// glewlwyd writes the roles claim as one comma-separated string (`OIDCProvider.authority`).
@Suite("Console sign-in")
struct ConsoleSignInTests {
    /// Access tokens of 40 s: the console renews 15 s early, so each expiry step waits about 25 s,
    /// and the ledger's refusal of an expired one (30 s of leeway) comes about 70 s after its issue.
    /// Under 75 s, so the page renews twice within a minute.
    static let tokenLifetime = 40

    /// Forged answers refused; code + PKCE sign-in; the list; expiry renewed before a call, after a
    /// 401 and within a minute; sign-out; a non-auditor refused.
    @Test("via glewlwyd in Chromium: forged answers refused, sign-in, renewals, sign-out, non-auditor refused")
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
                    "PROVIDER_DIR": provider.folder.path, "COLLABORATION_ID": started.identifier,
                    "TOKEN_LIFETIME": String(Self.tokenLifetime),
                    "SCREENSHOT_DIR": Repository.root.appendingPathComponent(".build/console-signin-screenshots").path,
                ]) { $1 }
                let script = Repository.root.appendingPathComponent("Tests/LedgerAPITests/Console/test_signin.py").path
                let run = try await ProcessRunner.run(python, [script], environment: environment)
                #expect(run.status == 0, "\(run.output)\nglewlwyd's log ends: \(provider.log().suffix(3000))")
                // Every step ran: the last one is 8 (the browser's console and localStorage).
                #expect(run.output.contains("ok - 8 "), "\(run.output)")
            }
        }
    }

    struct ScenarioError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
