import Foundation
import LedgerPostgres

/// Go's `sumdb/tlog` and `note` (Debian's golang-golang-x-mod-dev) over a log's tiles:
/// `Tests/LedgerAPITests/Go/tilecheck`, a verifier no one on the ledger wrote. It prints
/// "OK size N root R" and exits 0, or the failure and 1. Built once a test process: a Go build
/// is seconds of both cores, and the suites that run it run beside every other.
public enum GoTilecheck {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Checks the log at `root` (`http://host/tlog`, or a shard's `http://host/tlog/shard/0`)
    /// against its checkpoint key `key` (note verifier text).
    public static func run(root: String, key: String) async throws -> ProcessRunner.Output {
        try await ProcessRunner.run(try await binary.path(), [root, key])
    }

    /// `Tests/LedgerAPITests/Go/tlogproofcheck` on a C2SP tlog-proof file, with the log's key
    /// (and witnesses' keys): "OK index I size N …" and 0, or "FAIL: …" and 1.
    public static func tlogProof(file: String, keys: [String]) async throws -> ProcessRunner.Output {
        try await ProcessRunner.run(try await proofBinary.path(), [file] + keys)
    }

    static let binary = Binary(program: "tilecheck")
    static let proofBinary = Binary(program: "tlogproofcheck")

    actor Binary {
        let program: String
        private var built: Task<String, any Error>?

        init(program: String) { self.program = program }

        func path() async throws -> String {
            if built == nil { built = Task { [program] in try await GoTilecheck.build(program) } }
            return try await built!.value
        }
    }

    static func build(_ name: String) async throws -> String {
        guard let go = ProcessRunner.which("go") else {
            throw Unavailable(description: "Go is installed by scripts/setup-system.sh (golang-go, golang-golang-x-mod-dev)")
        }
        let program = Repository.root.appendingPathComponent("Tests/LedgerAPITests/Go/\(name)/main.go").path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())-\(UUID().uuidString.prefix(8))")
        let home = folder.appendingPathComponent("home").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let binary = folder.appendingPathComponent(name).path
        let environment = ProcessInfo.processInfo.environment.merging([
            "GOPATH": "/usr/share/gocode", "GO111MODULE": "off", "GOFLAGS": "", "GOCACHE": home + "/cache", "HOME": home,
        ]) { $1 }
        let output = try await ProcessRunner.run(go, ["build", "-o", binary, program], environment: environment)
        guard output.status == 0 else { throw Unavailable(description: "go build \(name): \(output.output)") }
        return binary
    }
}
