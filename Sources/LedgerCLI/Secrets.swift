import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerTokens

/// The tokens the API accepts: an identity provider's (LEDGER_JWKS_URL or LEDGER_JWKS_FILE),
/// else HS256 with LEDGER_JWT_SECRET, else (development) a secret generated into the data folder.
enum Tokens {
    static func claims(_ configuration: LedgerConfiguration) -> TokenAuthority.Claims {
        TokenAuthority.Claims(
            issuer: configuration.jwtIssuer, audience: configuration.jwtAudience, account: configuration.jwtAccountClaim,
            roles: configuration.jwtRolesClaim, rolesSeparator: configuration.jwtRolesSeparator)
    }

    /// The authority, and whether its secret was generated here (then a development token is printed).
    static func authority(_ configuration: LedgerConfiguration, createIfMissing: Bool) async throws -> (TokenAuthority, generated: Bool) {
        let (url, file) = (configuration.jwksURL, configuration.jwksFile)
        guard [url, file, configuration.jwtSecret].compactMap({ $0 }).count <= 1 else {
            throw ValidationError("refusing to start: set one of LEDGER_JWKS_URL, LEDGER_JWKS_FILE and LEDGER_JWT_SECRET, not several")
        }
        if let source = url.map(JWKSKeys.Source.url) ?? file.map(JWKSKeys.Source.file) {
            // Checked before the keys are fetched (LedgerSettings checks it too, at start).
            guard configuration.jwtAudience != nil else {
                throw ValidationError("refusing to start: \(TokenAuthority.MissingAudience())")
            }
            let keys: JWKSKeys
            do {
                keys = try await JWKSKeys(source)
            } catch {
                throw ValidationError("refusing to start: cannot load the identity provider's keys from \(JWKSKeys.name(source)): \(error)")
            }
            return (try TokenAuthority(provider: keys, claims: claims(configuration)), false)
        }
        let (secret, generated) = try JWTSecret.resolve(configuration, createIfMissing: createIfMissing)
        return (try await TokenAuthority(secret: secret, claims: claims(configuration)), generated)
    }
}

/// The JWT secret: LEDGER_JWT_SECRET, else (development) one generated into the data folder.
enum JWTSecret {
    static func resolve(_ configuration: LedgerConfiguration, createIfMissing: Bool) throws -> (secret: String, generated: Bool) {
        if let secret = configuration.jwtSecret { return (secret, false) }
        let dataDir = configuration.dataDirectory
        let file = dataDir.appendingPathComponent("jwt-secret")
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            return (existing.trimmingCharacters(in: .whitespacesAndNewlines), true)
        }
        guard createIfMissing else {
            throw ValidationError(
                "no LEDGER_JWT_SECRET and no development secret in \(file.path); run `ledger serve` once or set LEDGER_JWT_SECRET")
        }
        try FileManager.default.createDirectory(at: dataDir, withIntermediateDirectories: true)
        let secret = TokenAuthority.randomSecret()
        FileManager.default.createFile(atPath: file.path, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o600])
        return (secret, true)
    }
}
