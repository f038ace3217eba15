import Foundation
import LedgerAPI
import LedgerClient
import LedgerConfiguration
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerTokens
import Logging
import PostgresNIO
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// SPEC "Public verification": the log's C2SP tiles under /tlog over real HTTP, checked by Go's
/// `sumdb/tlog` and `note` (a verifier no one here wrote), their headers and refusals, and
/// `ledger log verify --url` from tiles alone.
@Suite("Tiles")
struct TilesTests {
    /// `count` events appended straight to the log, and the published checkpoint covering them.
    static func fill(_ server: LiveServer, _ count: Int) async throws -> Checkpoint {
        let store = EventStore(client: server.db, logger: Logger(label: "tiles-test"))
        for batch in stride(from: 0, to: count, by: 100) {
            _ = try await store.append(
                .init(
                    streamId: "tiles-\(UUID())", expectedVersion: .noStream,
                    events: (batch..<min(count, batch + 100)).map { event("Tiled", $0) }))
        }
        let head = try await store.head().position
        let key = server.signer.verifier
        let client = server.client("anyone")
        try await waitUntil(timeout: .seconds(30), "a published checkpoint of \(head)") {
            (try? await client.publishedCheckpoint(key: key).checkpoint.size) ?? 0 >= head
        }
        return try await client.publishedCheckpoint(key: key).checkpoint
    }

    static func get(_ server: LiveServer, _ path: String, token: String? = nil) async throws -> (
        status: Int, body: Data, headers: [String: String]
    ) {
        var request = URLRequest(url: URL(string: server.baseURL.absoluteString + path)!)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await TestHTTP.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers[String(describing: name).lowercased()] = String(describing: value) }
        return (http.statusCode, data, headers)
    }

    @Test("Go's sumdb/tlog and note verify our tiles: tree hash, record and tree proofs, level-0 entry bundles")
    func goVerifiesTiles() async throws {
        try await LiveServer.run(configuration: .testing { $0.publicEntries = true }) { server in
            let checkpoint = try await Self.fill(server, 700)
            let output = try await GoTilecheck.run(root: server.baseURL.absoluteString + "/tlog", key: server.signer.verifier.text)
            #expect(output.status == 0, "\(output.output)")
            #expect(output.output.contains("OK size \(checkpoint.size) root \(Base64.encode(checkpoint.rootHash))"), "\(output.output)")
        }
    }

    /// Headers, 404s past the published tree and for paths that name no tile, who may read entry
    /// bundles, and a 413 for an event over 65,535 bytes.
    @Test("tile headers, 404s past the tree and for non-tiles, who reads entry bundles, 413 over 65,535 bytes")
    func headersAndRefusals() async throws {
        try await LiveServer.run { server in
            let checkpoint = try await Self.fill(server, 700)
            let size = checkpoint.size
            let note = try await Self.get(server, "/tlog/checkpoint")
            #expect(
                note.status == 200 && note.headers["content-type"] == "text/plain; charset=utf-8"
                    && note.headers["cache-control"] == "no-cache")
            #expect(try Checkpoint.open(String(decoding: note.body, as: UTF8.self), verifier: server.signer.verifier).size >= size)
            let full = try await Self.get(server, "/tlog/tile/0/000")
            #expect(full.status == 200 && full.body.count == 8192 && full.headers["cache-control"] == "public, max-age=31536000, immutable")
            #expect(full.headers["content-type"] == "application/octet-stream")
            let (last, width) = (size / 256, Int(size % 256))
            let partial = try await Self.get(server, "/tlog/" + Tile(level: 0, index: last, width: width).path)
            #expect(partial.status == 200 && partial.body.count == width * 32 && partial.headers["cache-control"] == "no-cache")
            #expect(try await Self.get(server, "/tlog/" + Tile(level: 1, index: 0, width: Int(last)).path).status == 200)
            let auditor = try await server.authority.issue(account: "a", roles: ["auditor"])
            for past in [
                Tile(level: 0, index: last + 1, width: 256), Tile(level: 0, index: last, width: 256),
                Tile(level: 0, index: last, width: width + 1),
                Tile(level: 1, index: 0, width: 256), Tile(level: 2, index: 0, width: 1), Tile(level: nil, index: last + 1, width: 1),
            ] {
                #expect(try await Self.get(server, "/tlog/" + past.path, token: auditor).status == 404, "\(past)")
            }
            for bad in ["/tlog/tile/0", "/tlog/tile/0/1", "/tlog/tile/0/x000/001", "/tlog/tile/0/000.p/256", "/tlog/tile/64/000"] {
                let answer = try await Self.get(server, bad)
                #expect(answer.status == 404 && String(decoding: answer.body, as: UTF8.self).contains("is not a tile path"), "\(bad)")
            }
            // Entry bundles: an auditor's token (none: 401, another role: 403); they hash to level 0.
            #expect(try await Self.get(server, "/tlog/tile/entries/000").status == 401)
            #expect(
                try await Self.get(server, "/tlog/tile/entries/000", token: try await server.authority.issue(account: "a")).status == 403)
            let bundle = try await Self.get(
                server, "/tlog/tile/entries/000", token: try await server.authority.issue(account: "a", roles: ["auditor"]))
            #expect(bundle.status == 200 && Tile.leafHashes(ofBundle: Array(bundle.body)) == Array(full.body))
            // A bundle that needs a token is kept by no shared cache, full or partial.
            #expect(bundle.headers["cache-control"] == "private, no-store" && bundle.headers["vary"] == "Authorization")
            let partialBundle = try await Self.get(server, "/tlog/" + Tile(level: nil, index: last, width: width).path, token: auditor)
            #expect(partialBundle.status == 200 && partialBundle.headers["cache-control"] == "private, no-store")
            #expect(partialBundle.headers["vary"] == "Authorization")
            #expect(full.headers["vary"] == nil)
            // An event whose leaf would pass 65,535 bytes: 413, and nothing appended.
            let events = try await count(server.db)
            // Each option title is a 55-character commitment in the leaf, whatever its length.
            let options = ShareOptions(
                summary: nil,
                groups: (0..<32).map { g in
                    .init(
                        identifier: "g\(g)", title: "", kind: .switches,
                        options: (0..<64).map {
                            .init(identifier: "o\($0)", title: "", selected: false)
                        })
                })
            let refused = await rejection {
                _ = try await server.client("devin").prepareCollaboration(
                    localIdentifier: "big", title: "Big", initiator: Initiator(handle: "devin@example.com"), options: options)
            }
            #expect(refused?.status == 413 && refused?.code == "payload_too_large", "\(String(describing: refused))")
            #expect(try await count(server.db) == events)
        }
    }

    @Test("LEDGER_PUBLIC_ENTRIES=yes: a full entry bundle public and immutable, a partial one not cached")
    func publicEntriesCaching() async throws {
        try await LiveServer.run(configuration: .testing { $0.publicEntries = true }) { server in
            let size = try await Self.fill(server, 300).size
            let full = try await Self.get(server, "/tlog/tile/entries/000")
            #expect(
                full.status == 200 && full.headers["cache-control"] == "public, max-age=31536000, immutable" && full.headers["vary"] == nil)
            let partial = try await Self.get(server, "/tlog/" + Tile(level: nil, index: size / 256, width: Int(size % 256)).path)
            #expect(partial.status == 200 && partial.headers["cache-control"] == "no-cache")
        }
    }

    @Test("LEDGER_PUBLIC_ENTRIES=yes refused on a log with events from before pseudonyms, naming them")
    func publicEntriesRefusedBeforePseudonyms() async throws {
        try await withTestStore { store, owner, _ in
            let format = PrivacyFormat(client: owner, logger: Logger(label: "tiles-test"))
            _ = try await store.append(
                .init(streamId: "old-\(UUID())", expectedVersion: .noStream, events: (0..<10).map { event("Old", $0) }))
            #expect(try await format.publicEntriesRefusal() == nil)  // appended in the format
            // As on a log migrated from before 0017: its first 6 events predate the format.
            try await owner.query("UPDATE ledger_privacy_format SET pseudonyms_from = 7")
            let refusal = try #require(try await format.publicEntriesRefusal())
            #expect(refusal.contains("events 1…6") && refusal.contains("LEDGER_PUBLIC_ENTRIES"), "\(refusal)")
            // From before 0020 (free texts in plaintext): its first 9.
            try await owner.query("UPDATE ledger_privacy_format SET free_texts_from = 10")
            #expect(try await format.publicEntriesRefusal()?.contains("events 1…9") == true)
        }
    }

    @Test("ledger log verify --url passes from tiles on an intact log, fails naming why on a rewritten one")
    func verifyOverHTTP() async throws {
        let ledger = ledgerBinary()
        try #require(FileManager.default.isExecutableFile(atPath: ledger), "build the ledger executable first: \(ledger)")
        try await LiveServer.run { server in
            let saved = try await Self.fill(server, 300)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID()).txt")
            defer { try? FileManager.default.removeItem(at: file) }
            try await server.client("anyone").publishedCheckpoint(key: server.signer.verifier).note.write(
                to: file, atomically: true, encoding: .utf8)
            _ = try await Self.fill(server, 50)
            let arguments = [
                "log", "verify", "--url", server.baseURL.absoluteString, "--checkpoint", file.path, "--key", server.signer.verifier.text,
            ]
            let intact = try await ProcessRunner.run(ledger, arguments)
            #expect(intact.status == 0 && intact.output.contains("log verify: OK"), "\(intact.output)")
            #expect(intact.output.contains("extends the saved checkpoint of size \(saved.size)"), "\(intact.output)")
            // A superuser rewrites an event inside the saved tree (the partial tiles are read afresh).
            try await server.db.query("ALTER TABLE ledger_events DISABLE TRIGGER USER")
            try await server.db.query("UPDATE ledger_events SET data = '{\"rewritten\":true}' WHERE position = \(saved.size - 1)")
            try await server.db.query("ALTER TABLE ledger_events ENABLE TRIGGER USER")
            let rewritten = try await ProcessRunner.run(ledger, arguments)
            #expect(rewritten.status == 2 && rewritten.output.contains("log verify: FAILED"), "\(rewritten.output)")
            #expect(rewritten.output.contains("rewritten"), "\(rewritten.output)")
        }
    }
}
