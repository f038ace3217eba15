import Foundation
import LedgerConfiguration
import NIOCore

/// The identity provider the console signs auditors in through (OpenID Connect, authorization
/// code with PKCE, a public client: `LEDGER_OIDC_ISSUER`, `LEDGER_OIDC_CLIENT_ID`,
/// `LEDGER_OIDC_SCOPE`, `LEDGER_OIDC_RESOURCE`). The page reads it at `GET /console/provider.json`
/// and does the rest itself: discovery, the redirect, the code exchange, the checks of `state` and
/// `nonce`. The ledger never sees a code or the provider's answer, only the access token the page
/// then sends, checked as every token is (`TokenAuthority`: JWKS, issuer, audience, roles).
struct ConsoleProvider: Sendable {
    let issuer: String
    let clientID: String
    let scope: String
    let resource: String?
    /// The issuer's origin (`scheme://host[:port]`): the only place, besides the ledger, the
    /// page may fetch from (its discovery document and token endpoint).
    let origin: String

    /// The configured provider; nil where none is (the console then takes a pasted token).
    /// `LedgerSettings` has already refused an issuer without a client id, or one not http(s).
    init?(_ configuration: LedgerConfiguration) {
        guard let issuer = configuration.oidcIssuer, let clientID = configuration.oidcClientID,
            let url = URLComponents(string: issuer), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty
        else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        self.issuer = issuer
        self.clientID = clientID
        self.scope = configuration.oidcScope
        self.resource = configuration.oidcResource
        self.origin = "\(scheme)://\(bracketed.lowercased())" + (url.port.map { ":\($0)" } ?? "")
    }

    /// The console's policy, with a provider or without (the pasted token): nothing from
    /// elsewhere, and only this ledger and the provider's origin to fetch from (`nil`: no provider,
    /// this ledger alone); no `<base>` to move where relative addresses lead, forms sent to this
    /// ledger only; never framed.
    static func contentSecurityPolicy(_ provider: ConsoleProvider?) -> String {
        let connect = provider.map { "connect-src 'self' \($0.origin); " } ?? ""
        return "default-src 'self'; \(connect)base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    /// `GET /console/provider.json`: `{"provider": null}` without one, so the page offers the
    /// pasted token; else what the page needs to send the auditor there. No secret: the console
    /// is a public client.
    static func document(_ provider: ConsoleProvider?) -> ByteBuffer {
        var fields: [String: String]? = nil
        if let provider {
            fields = ["issuer": provider.issuer, "clientId": provider.clientID, "scope": provider.scope]
            fields?["resource"] = provider.resource
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ByteBuffer(bytes: (try? encoder.encode(["provider": fields])) ?? Data(#"{"provider":null}"#.utf8))
    }
}
