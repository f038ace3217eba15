import ArgumentParser
import Foundation
import LedgerAPI

/// The tokens the API accepts: an identity provider's (LEDGER_JWKS_URL or LEDGER_JWKS_FILE),
/// else HS256 with LEDGER_JWT_SECRET, else (development) a secret generated into the data folder.
enum Tokens {
    /// Whether the deployment's token keys are configured (not a development secret).
    static var configured: Bool {
        ["LEDGER_JWT_SECRET", "LEDGER_JWKS_URL", "LEDGER_JWKS_FILE"].contains { LedgerSettings.value($0) != nil }
    }

    static var claims: TokenAuthority.Claims {
        TokenAuthority.Claims(
            issuer: LedgerSettings.value("LEDGER_JWT_ISSUER"), audience: LedgerSettings.value("LEDGER_JWT_AUDIENCE"),
            account: LedgerSettings.value("LEDGER_JWT_ACCOUNT_CLAIM") ?? "sub", roles: LedgerSettings.value("LEDGER_JWT_ROLES_CLAIM") ?? "roles")
    }

    /// The authority, and whether its secret was generated here (then a development token is printed).
    static func authority(dataDir: URL, createIfMissing: Bool) async throws -> (TokenAuthority, generated: Bool) {
        let (url, file) = (LedgerSettings.value("LEDGER_JWKS_URL"), LedgerSettings.value("LEDGER_JWKS_FILE"))
        guard [url, file, LedgerSettings.value("LEDGER_JWT_SECRET")].compactMap({ $0 }).count <= 1 else {
            throw ValidationError("refusing to start: set one of LEDGER_JWKS_URL, LEDGER_JWKS_FILE and LEDGER_JWT_SECRET, not several")
        }
        if let source = url.map(JWKSKeys.Source.url) ?? file.map(JWKSKeys.Source.file) {
            do {
                return (TokenAuthority(provider: try await JWKSKeys(source), claims: claims), false)
            } catch {
                throw ValidationError("refusing to start: cannot load the identity provider's keys from \(JWKSKeys.name(source)): \(error)")
            }
        }
        let (secret, generated) = try JWTSecret.resolve(dataDir: dataDir, createIfMissing: createIfMissing)
        return (try await TokenAuthority(secret: secret, claims: claims), generated)
    }
}

/// The JWT secret: LEDGER_JWT_SECRET, else (development) one generated into the data folder.
enum JWTSecret {
    static func resolve(dataDir: URL, createIfMissing: Bool) throws -> (secret: String, generated: Bool) {
        if let secret = LedgerSettings.value("LEDGER_JWT_SECRET") { return (secret, false) }
        let file = dataDir.appendingPathComponent("jwt-secret")
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            return (existing.trimmingCharacters(in: .whitespacesAndNewlines), true)
        }
        guard createIfMissing else {
            throw ValidationError("no LEDGER_JWT_SECRET and no development secret in \(file.path); run `ledger serve` once or set LEDGER_JWT_SECRET")
        }
        try FileManager.default.createDirectory(at: dataDir, withIntermediateDirectories: true)
        let secret = TokenAuthority.randomSecret()
        FileManager.default.createFile(atPath: file.path, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o600])
        return (secret, true)
    }
}
