import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerTokens

/// A real OpenID Connect provider on loopback, Debian's glewlwyd, as `scripts/oidc-provider`
/// starts and configures it (the console registered as a public client with PKCE; the users
/// `auditor`, `reader` and `owner`), for the tests of the console's sign-in through a provider.
/// `run` stops it and deletes its folder whatever the body does.
public struct OIDCProvider: Sendable {
    /// The script's folder: glewlwyd's configuration, SQLite database, keys and log.
    public let folder: URL
    public let issuer: String
    public let clientID: String
    /// The `aud` of its access tokens, asked for as an RFC 8707 resource.
    public let audience: String
    public let jwksURL: String
    /// Each user's password.
    public let passwords: [String: String]

    /// glewlwyd writes a user's roles as one string, joined with this (`LEDGER_JWT_ROLES_SEPARATOR`).
    public static let rolesSeparator: Character = ","

    /// The ledger's token checking for this provider's tokens: its keys, issuer and audience, and
    /// its roles claim split on `rolesSeparator`.
    public func authority() async throws -> TokenAuthority {
        try TokenAuthority(
            provider: try await JWKSKeys(.url(jwksURL)),
            claims: .init(issuer: issuer, audience: audience, rolesSeparator: Self.rolesSeparator))
    }

    /// `configuration` with the console's sign-in through this provider, and the token settings
    /// that `authority()` checks with.
    public func configure(_ configuration: inout LedgerConfiguration) {
        configuration.oidcIssuer = issuer
        configuration.oidcClientID = clientID
        configuration.oidcResource = audience
        configuration.jwtIssuer = issuer
        configuration.jwtAudience = audience
        configuration.jwtRolesSeparator = Self.rolesSeparator
    }

    /// An access token for `user`, got as the console gets one, without a browser.
    public func token(_ user: String) async throws -> String {
        let run = try await ProcessRunner.run(Self.script, ["token", "--dir", folder.path, "--user", user])
        guard run.status == 0, let token = run.output.split(separator: "\n").last.map(String.init), token.hasPrefix("ey") else {
            throw ProviderError("scripts/oidc-provider token --user \(user) failed: \(run.output)")
        }
        return token
    }

    /// glewlwyd's log (what it issued and refused), for a test's failure message and its counts.
    public func log() -> String {
        (try? String(contentsOf: folder.appendingPathComponent("glewlwyd.log"), encoding: .utf8)) ?? ""
    }

    static var script: String { Repository.root.appendingPathComponent("scripts/oidc-provider").path }

    /// Starts a provider whose console redirect URI is `redirectURI` and whose access tokens last
    /// `tokenLifetime` seconds, runs `body`, then stops it.
    public static func run<T: Sendable>(
        redirectURI: String, tokenLifetime: Int = 3600, _ body: @Sendable (OIDCProvider) async throws -> T
    ) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-provider-\(UUID().uuidString.prefix(8))")
        let start = try await ProcessRunner.run(
            script, ["start", "--dir", folder.path, "--redirect-uri", redirectURI, "--token-lifetime", String(tokenLifetime)])
        guard start.status == 0 else { throw ProviderError("scripts/oidc-provider start failed: \(start.output)") }
        let result: Result<T, any Error>
        do {
            let info = try JSONDecoder().decode(Info.self, from: Data(contentsOf: folder.appendingPathComponent("provider.json")))
            let provider = OIDCProvider(
                folder: folder, issuer: info.issuer, clientID: info.clientID, audience: info.audience, jwksURL: info.jwksURL,
                passwords: info.users.mapValues(\.password))
            result = .success(try await body(provider))
        } catch {
            result = .failure(error)
        }
        let stop = try await ProcessRunner.run(script, ["stop", "--dir", folder.path])
        if stop.status != 0 { throw ProviderError("scripts/oidc-provider stop failed: \(stop.output)") }
        return try result.get()
    }

    /// provider.json, as the script writes it.
    struct Info: Decodable {
        struct User: Decodable { let password: String }
        let issuer: String
        let clientID: String
        let audience: String
        let jwksURL: String
        let users: [String: User]

        enum CodingKeys: String, CodingKey {
            case issuer, audience, users
            case clientID = "client_id"
            case jwksURL = "jwks_url"
        }
    }

    struct ProviderError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
