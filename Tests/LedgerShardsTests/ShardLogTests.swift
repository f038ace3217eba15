import Foundation
import LedgerApp
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTestSupport
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Each shard is a log of its own (issue 49): its origin (the deployment's with `/shard/k`), its
/// checkpoints signed with the deployment's key under that name, its tiles at `/tlog/shard/{k}/`,
/// checked by Go's `sumdb/tlog` and `note`, a verifier no one here wrote.
@Suite("Shards' own logs")
struct ShardLogTests {
    @Test(
        "each shard's checkpoint at /tlog/shard/{k}/ covers its events and opens with its own key alone; Go's sumdb/tlog verifies each shard's tiles; other shard paths 404, the top log 501"
    )
    func shardLogs() async throws {
        let go = try #require(ProcessRunner.which("go"), "Go is installed by scripts/setup-system.sh (golang-go, golang-golang-x-mod-dev)")
        let program = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../LedgerAPITests/Go/tilecheck/main.go").standardizedFileURL.path
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tilecheck-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let signer = try NoteSigner(name: "shards.test/ledger")
        let keys = try RoleServices.shardSigners(signer, count: 2).map(\.verifier)
        #expect(keys.map(\.name) == ["shards.test/ledger/shard/0", "shards.test/ledger/shard/1"])
        let shards = [try await TestCluster.shared.makeDatabase(), try await TestCluster.shared.makeDatabase()]
        try await LiveShards.run(shards: shards, configuration: .testing { $0.publicEntries = true }, signer: signer) { live in
            let devin = live.client("devin")
            for n in 0..<40 {
                let id = try await devin.prepareCollaboration(
                    localIdentifier: "log \(n)", title: "Log \(n)", initiator: Initiator(handle: "devin@example.com")
                ).identifier
                _ = try await devin.updateParticipants(added: [SimulatedPerson(collaborationId: id, devices: 1).rootHashData], in: id)
            }
            for index in 0..<2 {
                let events = try await live.events(on: index)
                #expect(events > 0)
                let url = URL(string: live.baseURL.absoluteString + "/tlog/shard/\(index)/checkpoint")!
                try await waitUntil(timeout: .seconds(30), "shard \(index)'s checkpoint covering its \(events) events") {
                    let (body, response) = try await TestHTTP.data(from: url)
                    let text = String(decoding: body, as: UTF8.self)
                    return response.statusCode == 200 && (try? Checkpoint.open(text, verifier: keys[index]).size) == events
                }
                let text = String(decoding: try await TestHTTP.data(from: url).0, as: UTF8.self)
                #expect(throws: (any Error).self, "shard \(index)'s checkpoint opened with the other's key") {
                    try Checkpoint.open(text, verifier: keys[1 - index])
                }
                #expect(throws: (any Error).self) { try Checkpoint.open(text, verifier: signer.verifier) }
                let environment = ProcessInfo.processInfo.environment.merging([
                    "GOPATH": "/usr/share/gocode", "GO111MODULE": "off", "GOFLAGS": "", "GOCACHE": home + "/cache", "HOME": home,
                ]) { $1 }
                let output = try await ProcessRunner.run(
                    go, ["run", program, live.baseURL.absoluteString + "/tlog/shard/\(index)", keys[index].text], environment: environment)
                #expect(output.status == 0, "\(output.output)")
                #expect(output.output.contains("OK size \(events)"), "\(output.output)")
            }
            for (path, status) in [("tlog/shard/2/checkpoint", 404), ("tlog/shard/01/checkpoint", 404), ("tlog/checkpoint", 501)] {
                let (_, response) = try await TestHTTP.data(from: live.baseURL.appendingPathComponent(path))
                #expect(response.statusCode == status, "/\(path)")
            }
        }
    }
}
