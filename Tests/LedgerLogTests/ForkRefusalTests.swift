import Foundation
import LedgerDomain
import LedgerLog
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The checkpointer never signs a tree that does not extend its floor (SPEC "High availability",
/// "Backups and recovery"): the checkpoint kept in a file outside the database, and the database's
/// own latest published checkpoint; here the database loses published events as a failover to a
/// standby that lacked them, or a superuser, would, then takes new ones in their place.
@Suite("Fork refusal", .serialized)  // the refusals metric is the process's
struct ForkRefusalTests {
    /// `ledger_checkpoint_fork_refusals_total` of the server's log from /metrics (the process's
    /// metrics: other tests' logs have their own `log` label).
    static func refusals(_ server: LiveServer) async throws -> Double {
        let metrics = String(decoding: try await TestHTTP.data(from: server.baseURL.appendingPathComponent("metrics")).0, as: UTF8.self)
        return metrics.split(separator: "\n")
            .filter { $0.hasPrefix("ledger_checkpoint_fork_refusals_total") && $0.contains("log=\"\(server.signer.name)\"") }
            .compactMap { Double($0.split(separator: " ").last!) }.reduce(0, +)
    }

    static func maxSigned(_ server: LiveServer) async throws -> Int64 {
        for try await size in try await server.db.query("SELECT max(tree_size) FROM ledger_checkpoints").decode(Int64?.self) {
            return size ?? 0
        }
        return 0
    }

    /// The published checkpoint is kept in the file; a log missing published events, then one with
    /// others in their place, is refused, counted, and never signed.
    @Test("a log missing published events, or with others in their place, is refused, counted, never signed")
    func refused() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-fork-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("published-checkpoint")
        let signer = try NoteSigner(name: "forkfile.test/ledger")
        try await LiveServer.run(signer: signer, publishedFile: file) { server in
            let store = EventStore(client: server.db, logger: Logger(label: "fork-test"))
            let published = try await store.append(
                .init(streamId: "f", expectedVersion: .noStream, events: (0..<40).map { event("F", $0) })
            )
            .lastPosition
            let tree = LogTree(client: server.db, logger: Logger(label: "fork-test"))
            try await waitUntil(timeout: .seconds(30), "a published checkpoint of \(published)") {
                (try await tree.latestCheckpoint()?.size ?? 0) == published
            }
            try await waitUntil(timeout: .seconds(10), "the file holds it") {
                (try? String(contentsOf: file, encoding: .utf8)) == (try await tree.latestCheckpoint()?.note)
            }
            let before = try await Self.refusals(server)

            // The database as a standby that had only 30 events would be after a failover: the
            // rest of the log, its tree and the checkpoints over it are gone.
            try await truncateLog(server.db, to: 30, keepingCheckpoints: false)
            try await waitUntil(timeout: .seconds(30), "a refusal: 30 events, fewer than the published 40") {
                try await Self.refusals(server) > before
            }

            // New events where the lost ones were, and past them: a tree of 45 that does not
            // extend the published 40.
            let forked = try await store.append(.init(streamId: "g", expectedVersion: .noStream, events: (0..<15).map { event("G", $0) }))
                .lastPosition
            #expect(forked == 45)
            let afterFork = try await Self.refusals(server)
            try await waitUntil(timeout: .seconds(30), "a refusal: the first 40 events are not the published ones") {
                try await Self.refusals(server) > afterFork
            }
            #expect(try await Self.maxSigned(server) <= 30, "nothing signed past the fork")
            #expect((try await tree.latestCheckpoint()?.size ?? 0) <= 30)
            let kept = try Checkpoint(text: SignedNote.parse(try String(contentsOf: file, encoding: .utf8)).text)
            #expect(kept.size == published, "the file still holds the published checkpoint")
        }
    }

    /// GET /tlog/checkpoint: what anyone is served; nil when it is not a 200 (none published).
    static func served(_ server: LiveServer) async throws -> String? {
        let url = server.baseURL.appendingPathComponent("tlog").appendingPathComponent("checkpoint")
        let (data, response) = try await TestHTTP.data(from: url)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func signedCount(_ server: LiveServer) async throws -> Int64 {
        for try await n in try await server.db.query("SELECT count(*) FROM ledger_checkpoints").decode(Int64.self) { return n }
        return 0
    }

    /// Appends `count` events on a new stream; waits for the refusal their tree meets.
    static func appendRefused(_ server: LiveServer, _ stream: String, _ count: Int) async throws {
        let counted = try await refusals(server)
        let store = EventStore(client: server.db, logger: Logger(label: "fork-test"))
        _ = try await store.append(.init(streamId: stream, expectedVersion: .noStream, events: (0..<count).map { event(stream, $0) }))
        try await waitUntil(timeout: .seconds(30), "a refusal of the tree with \(stream)") { try await refusals(server) > counted }
    }

    /// Issue 37: the file deleted and the log cut below the published checkpoint, then written to:
    /// the database's record refuses it and counts it; /tlog/checkpoint stays the published one,
    /// nothing else is signed.
    @Test("issue 37: file deleted, log cut below the checkpoint and written to: refused, counted, none signed")
    func fileDeleted() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-fork-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("published-checkpoint")
        try await LiveServer.run(signer: try NoteSigner(name: "nofile.test/ledger"), publishedFile: file) { server in
            let store = EventStore(client: server.db, logger: Logger(label: "fork-test"))
            let published = try await store.append(
                .init(streamId: "f", expectedVersion: .noStream, events: (0..<40).map { event("F", $0) })
            )
            .lastPosition
            let tree = LogTree(client: server.db, logger: Logger(label: "fork-test"))
            try await waitUntil(timeout: .seconds(30), "a published checkpoint of \(published)") {
                (try await tree.latestCheckpoint()?.size ?? 0) == published
            }
            try await waitUntil(timeout: .seconds(10), "the file and /tlog/checkpoint hold it") {
                let note = try await tree.latestCheckpoint()?.note
                let served = try await Self.served(server)
                return (try? String(contentsOf: file, encoding: .utf8)) == note && served == note
            }
            let before = try #require(try await Self.served(server))
            let signedBefore = try await Self.signedCount(server)
            let refusalsBefore = try await Self.refusals(server)

            // As measured in issue 37: the file gone (no volume), the log cut below the published
            // checkpoint, whose database records stay.
            try FileManager.default.removeItem(at: file)
            try await truncateLog(server.db, to: 30, keepingCheckpoints: true)
            try await waitUntil(timeout: .seconds(30), "a refusal: 30 events, fewer than the published 40") {
                try await Self.refusals(server) > refusalsBefore
            }
            // Written to: other events up to the published size (another root), then past it.
            try await Self.appendRefused(server, "g", 10)
            try await Self.appendRefused(server, "h", 15)

            // Nothing that contradicts the published checkpoint is signed or served, for a while.
            let watchUntil = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < watchUntil {
                #expect(try await Self.served(server) == before, "/tlog/checkpoint is still the published 40")
                #expect(try await Self.maxSigned(server) == published, "nothing larger is signed")
                #expect(try await Self.signedCount(server) == signedBefore, "nothing else is signed")
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try Checkpoint.open(before, verifier: server.signer.verifier).size == published)
            #expect(!FileManager.default.fileExists(atPath: file.path), "nothing was signed, so the file was not written again")
        }
    }

    @Test("a file that does not hold a checkpoint is refused and counted; nothing is signed")
    func unreadableFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-fork-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("published-checkpoint")
        try Data("not a note".utf8).write(to: file)
        try await LiveServer.run(signer: try NoteSigner(name: "badfile.test/ledger"), publishedFile: file) { server in
            let before = try await Self.refusals(server)
            let store = EventStore(client: server.db, logger: Logger(label: "fork-test"))
            _ = try await store.append(.init(streamId: "f", expectedVersion: .noStream, events: [event("F", 0)]))
            try await waitUntil(timeout: .seconds(30), "a refusal") { try await Self.refusals(server) > before }
            #expect(try await Self.maxSigned(server) == 0)
            #expect(try String(contentsOf: file, encoding: .utf8) == "not a note", "the file is left for the operator")
        }
    }
}
