import Foundation
import LedgerPostgres

/// Go's `sumdb/tlog` and `note` (Debian's golang-golang-x-mod-dev) over a log's tiles:
/// `Tests/LedgerAPITests/Go/tilecheck`, a verifier no one on the ledger wrote. It prints
/// "OK size N root R" and exits 0, or the failure and 1.
public enum GoTilecheck {
    public struct GoMissing: Error, CustomStringConvertible {
        public var description: String { "Go is installed by scripts/setup-system.sh (golang-go, golang-golang-x-mod-dev)" }
    }

    /// Checks the log at `root` (`http://host/tlog`, or a shard's `http://host/tlog/shard/0`)
    /// against its checkpoint key `key` (note verifier text).
    public static func run(root: String, key: String) async throws -> ProcessRunner.Output {
        guard let go = ProcessRunner.which("go") else { throw GoMissing() }
        let program = Repository.root.appendingPathComponent("Tests/LedgerAPITests/Go/tilecheck/main.go").path
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tilecheck-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ProcessInfo.processInfo.environment.merging([
            "GOPATH": "/usr/share/gocode", "GO111MODULE": "off", "GOFLAGS": "", "GOCACHE": home + "/cache", "HOME": home,
        ]) { $1 }
        return try await ProcessRunner.run(go, ["run", program, root, key], environment: environment)
    }
}
