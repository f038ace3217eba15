import ArgumentParser
import Foundation
import LedgerConfiguration
import TransparencyLog

/// The checkpoint signing key: `LEDGER_SIGNING_KEY_FILE` (Go `note` format,
/// `PRIVATE+KEY+name+id+key`, as `ledger log keygen` writes), else (development) one
/// generated into the data folder. Its name must be the log's origin.
enum SigningKey {
    static func resolve(_ configuration: LedgerConfiguration) throws -> (signer: NoteSigner, generated: Bool) {
        let (dataDir, origin) = (configuration.dataDirectory, configuration.origin)
        let file: URL
        var generated = false
        if let path = configuration.signingKeyFile {
            file = URL(fileURLWithPath: path)
        } else {
            file = dataDir.appendingPathComponent("log-signing-key")
            if !FileManager.default.fileExists(atPath: file.path) {
                try FileManager.default.createDirectory(at: dataDir, withIntermediateDirectories: true)
                let signer = try NoteSigner(name: origin)
                FileManager.default.createFile(atPath: file.path, contents: Data(signer.text.utf8), attributes: [.posixPermissions: 0o600])
                generated = true
            }
        }
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read the signing key \(file.path): \(error.localizedDescription)")
        }
        let signer: NoteSigner
        do {
            signer = try NoteSigner(text)
        } catch {
            throw ValidationError("\(file.path) is not a signing key: \(error)")
        }
        guard signer.name == origin else {
            throw ValidationError(
                "the signing key in \(file.path) is named \(signer.name) but the log's origin is \(origin): set LEDGER_LOG_ORIGIN=\(signer.name), or make a key named \(origin) with `ledger log keygen --origin \(origin)`"
            )
        }
        return (signer, generated)
    }
}
