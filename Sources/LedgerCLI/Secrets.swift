import ArgumentParser
import Foundation
import LedgerAPI

/// The JWT secret: LEDGER_JWT_SECRET, else (development) one generated into the data folder.
enum JWTSecret {
    static func resolve(dataDir: URL, createIfMissing: Bool) throws -> (secret: String, generated: Bool) {
        if let secret = Environment.value("LEDGER_JWT_SECRET") { return (secret, false) }
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
