import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerDomain
import LedgerLog
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing
import TransparencyLog

/// The checkpointer never signs a tree that does not extend the last published checkpoint, kept
/// in a file outside the database (SPEC "High availability"); here the database loses published
/// events as a failover to a standby that lacked them would, then takes new ones in their place.
@Suite("Fork refusal", .serialized)  // the refusals metric is the process's
struct ForkRefusalTests {
    /// `ledger_checkpoint_fork_refusals_total` from /metrics.
    static func refusals(_ server: LiveServer) async throws -> Double {
        let metrics = String(decoding: try await URLSession.shared.data(from: server.baseURL.appendingPathComponent("metrics")).0, as: UTF8.self)
        return metrics.split(separator: "\n").filter { $0.hasPrefix("ledger_checkpoint_fork_refusals_total") }
            .compactMap { Double($0.split(separator: " ").last!) }.reduce(0, +)
    }

    static func maxSigned(_ server: LiveServer) async throws -> Int64 {
        for try await size in try await server.db.query("SELECT max(tree_size) FROM ledger_checkpoints").decode(Int64?.self) { return size ?? 0 }
        return 0
    }

    @Test("the published checkpoint is kept in the file; a log missing published events, then one with others in their place, is refused, counted, and never signed")
    func refused() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-fork-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("published-checkpoint")
        let signer = try NoteSigner(name: "forkfile.test/ledger")
        try await LiveServer.run(signer: signer, publishedFile: file) { server in
            let store = EventStore(client: server.db, logger: Logger(label: "fork-test"))
            let published = try await store.append(.init(streamId: "f", expectedVersion: .noStream, events: (0 ..< 40).map { event("F", $0) }))
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
            let forked = try await store.append(.init(streamId: "g", expectedVersion: .noStream, events: (0 ..< 15).map { event("G", $0) }))
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

    @Test("without a file: a tree whose size already has a checkpoint with another root is refused, and nothing larger is signed")
    func sameSizeOtherRoot() async throws {
        try await LiveServer.run(signer: try NoteSigner(name: "samesize.test/ledger")) { server in
            let store = EventStore(client: server.db, logger: Logger(label: "fork-test"))
            _ = try await store.append(.init(streamId: "f", expectedVersion: .noStream, events: (0 ..< 40).map { event("F", $0) }))
            try await waitUntil(timeout: .seconds(30), "a checkpoint of 40") { try await Self.maxSigned(server) == 40 }
            let before = try await Self.refusals(server)
            try await truncateLog(server.db, to: 30, keepingCheckpoints: true)
            // The checkpointer sees the log end before its tree, builds it again from the 30 events
            // and signs 30 (40 was signed in one piece); then other events at 31 ... 40 in one
            // append: its next tree is of 40, whose checkpoint has the old root.
            try await waitUntil(timeout: .seconds(30), "a checkpoint of 30") {
                for try await n in try await server.db.query("SELECT count(*) FROM ledger_checkpoints WHERE tree_size = 30").decode(Int64.self) {
                    return n == 1
                }
                return false
            }
            _ = try await store.append(.init(streamId: "g", expectedVersion: .noStream, events: (0 ..< 10).map { event("G", $0) }))
            try await waitUntil(timeout: .seconds(30), "a refusal: the checkpoint of 40 has another root") {
                try await Self.refusals(server) > before
            }
            _ = try await store.append(.init(streamId: "h", expectedVersion: .noStream, events: (0 ..< 5).map { event("H", $0) }))
            let watchUntil = ContinuousClock.now + .seconds(1)
            while ContinuousClock.now < watchUntil {
                let signed = try await Self.maxSigned(server)
                #expect(signed == 40, "a tree past the forked 40 was signed: \(signed)")
                try await Task.sleep(for: .milliseconds(100))
            }
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
