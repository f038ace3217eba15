import ArgumentParser
import Foundation
import LedgerApp
import LedgerClient
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import LedgerTokens
import Logging
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The public tiles (C2SP `tlog-tiles`, issue 30): full tiles served from memory beside the HTTP
/// floor of the same run, and inclusion proofs a client computes from tiles beside the ones the
/// server computes from the database (`/v1/log/proofs/inclusion`).
struct BenchTiles: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiles",
        abstract:
            "Full-tile reads at 16 clients beside the HTTP floor (GET /health) of the same run; inclusion proofs computed from tiles beside /v1/log/proofs/inclusion."
    )

    @OptionGroup var target: BenchTarget
    @Option(help: "Rounds; medians are reported.") var rounds = 3
    @Option(help: "Events in the log.") var events = 200_000
    @Option(help: "Requests (or proofs) each of the 16 clients makes per phase.") var requests = 1_000

    func run() async throws {
        let quiet = Logs.quiet()
        let (events, requests, rounds) = (events, requests, rounds)
        print("ledger bench tiles: \(events) events, \(rounds) rounds, 16 clients, \(requests) requests each per phase")
        var results: [String: [BenchVerify.Outcome]] = [:]
        try await target.run(logger: quiet) { settings in
            let signer = try NoteSigner(name: "bench.local/ledger")
            results = try await LocalLedger.run(settings, logger: quiet, maxConnections: 40, signer: signer) { ledger in
                let store = EventStore(client: ledger.client, logger: quiet)
                let data = #"{"rootHash":"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=","kind":"bench"}"#
                for batch in stride(from: 0, to: events, by: 1_000) {
                    _ = try await store.append(
                        .init(
                            streamId: "tiles-\(batch)", expectedVersion: .noStream,
                            events: (0..<min(1_000, events - batch)).map { _ in NewEvent(type: "BenchEvent", data: data, metadata: "{}") }))
                }
                let size = try await LogTree(client: ledger.client, logger: quiet).checkpoint(atLeast: Int64(events), within: .seconds(600))
                    .size
                let token = try await ledger.authority.issue(account: "bench")
                var transports: [NIOTransport] = []
                for _ in 0..<16 { transports.append(try await NIOTransport.connect(host: "127.0.0.1", port: ledger.baseURL.port ?? 80)) }
                let clients = transports.map { LedgerClient(baseURL: ledger.baseURL, transport: $0) { token } }
                let base = ledger.baseURL.absoluteString
                let fullTiles = Int(size / 256)
                var results: [String: [BenchVerify.Outcome]] = [:]
                for round in 1...rounds {
                    let connections = transports
                    results["floor", default: []].append(
                        try await BenchVerify.timed(calls: Array(repeating: requests, count: 16)) { c, _ in
                            let (_, status) = try await connections[c].send(URLRequest(url: URL(string: base + "/health")!))
                            guard status == 200 else { throw ValidationError("GET /health answered \(status)") }
                        })
                    results["tiles", default: []].append(
                        try await BenchVerify.timed(calls: Array(repeating: requests, count: 16)) { c, n in
                            let tile = Tile(level: 0, index: Int64((c * 7919 + n * 104_729) % fullTiles), width: 256)
                            let (body, status) = try await connections[c].send(URLRequest(url: URL(string: base + "/tlog/" + tile.path)!))
                            guard status == 200, body.count == 8192 else { throw ValidationError("\(tile.path) answered \(status)") }
                        })
                    let proofs = requests / 4
                    results["fromTiles", default: []].append(
                        try await BenchVerify.timed(calls: Array(repeating: proofs, count: 16)) { c, n in
                            let leaf = Int64((c * 7919 + n * 104_729) % Int(size))
                            _ = try await clients[c].hashes(of: MerkleTree.inclusionRanges(leaf: leaf, size: size), treeSize: size)
                        })
                    results["server", default: []].append(
                        try await BenchVerify.timed(calls: Array(repeating: proofs, count: 16)) { c, n in
                            let position = Int64((c * 7919 + n * 104_729) % Int(size)) + 1
                            _ = try await clients[c].inclusionProof(position: position, treeSize: size)
                        })
                    print(
                        String(
                            format: "  round %d: floor %.0f/s, full tiles %.0f/s, proofs from tiles %.0f/s, proofs by the server %.0f/s",
                            round, results["floor"]!.last!.rate, results["tiles"]!.last!.rate, results["fromTiles"]!.last!.rate,
                            results["server"]!.last!.rate))
                }
                for transport in transports { await transport.close() }
                return results
            }
        }
        let rate = { (name: String) in Stats.median(results[name]!.map(\.rate)) }
        let p99 = { (name: String) in Stats.median(results[name]!.map(\.p99)) }
        print("")
        print("medians of \(rounds) rounds, 16 clients")
        print(String(format: "  HTTP floor: GET /health                 %8.0f requests/s   p99 %6.1f ms", rate("floor"), p99("floor")))
        print(
            String(
                format: "  full tiles (level 0, from memory)       %8.0f requests/s   p99 %6.1f ms   ratio to floor %.2f (target 0.8)",
                rate("tiles"), p99("tiles"), rate("tiles") / rate("floor")))
        print(
            String(
                format: "  inclusion proofs computed from tiles    %8.0f proofs/s     p99 %6.1f ms   ratio to the server's %.2f",
                rate("fromTiles"), p99("fromTiles"), rate("fromTiles") / rate("server")))
        print(String(format: "  inclusion proofs by the server (/v1)    %8.0f proofs/s     p99 %6.1f ms", rate("server"), p99("server")))
    }
}
