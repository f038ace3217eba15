import Foundation
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing
import TransparencyLog

@testable import LedgerLog

/// The checkpointer's floor (`CheckpointFloor`) on a real PostgreSQL: each record it checks (the
/// file, the database's published and signed checkpoints, the witnesses' sizes), a missing file
/// that is no clean slate, and what each refusal says.
@Suite("Checkpoint floor")
struct CheckpointFloorTests {
    static let logger = Logger(label: "floor-test")

    /// `body` refused with a `ForkRefusal` whose text contains `expected`.
    static func expectRefusal(
        _ expected: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("not refused; expected a refusal saying: \(expected)", sourceLocation: sourceLocation)
        } catch let refusal as ForkRefusal {
            #expect(refusal.description.contains(expected), "\(refusal)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error), not a refusal saying: \(expected)", sourceLocation: sourceLocation)
        }
    }

    /// A log cut below the published checkpoint, with the file gone, is refused with the missing
    /// range; written to again, with what differs.
    @Test("a log cut below its checkpoint, file gone: refused with the missing range; written to, what differs")
    func databaseRecords() async throws {
        try await withTestStore { store, client, _ in
            let signer = try NoteSigner(name: "floor.test/ledger")
            _ = try await store.append(.init(streamId: "f", expectedVersion: .noStream, events: (0..<40).map { event("F", $0) }))
            let published = try await VerifiableLogTests.withCheckpointer(client, signer: signer) {
                try await VerifiableLogTests.checkpointAtHead(client, store, signer.verifier)
            }
            #expect(published.size == 40)
            let tree = LogTree(client: client, logger: Self.logger)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-floor-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: folder) }
            let floor = CheckpointFloor(
                file: CheckpointFile(url: folder.appendingPathComponent("published-checkpoint")), tree: tree, origin: signer.name,
                logger: Self.logger)

            // No file: the database's record still holds, and the tree as it is extends it.
            #expect(try await floor.bounds(witnessSizes: [:]).map(\.size) == [40])
            try await floor.check(size: 40, root: published.rootHash, witnessSizes: [:])
            // No file and a witness that has not said its size (unreachable): it may hold the only record of more.
            await Self.expectRefusal("the checkpoint file is missing and W1 did not say what size it holds") {
                try await floor.check(size: 40, root: published.rootHash, witnessSizes: [:], unknown: ["W1"])
            }

            try await truncateLog(client, to: 30, keepingCheckpoints: true)
            let root30 = try await tree.hashes(of: [0..<30])[0]
            await Self.expectRefusal(
                "the log holds 30 events; the latest published checkpoint in the database covers 40: events 31…40 are missing"
            ) { try await floor.check(size: 30, root: root30, witnessSizes: [:]) }

            // Other events where the cut ones were: the same size, another root.
            _ = try await store.append(.init(streamId: "g", expectedVersion: .noStream, events: (0..<10).map { event("G", $0) }))
            let forked = MerkleTree.root(leafHashes: try await tree.leafHashesFromEvents(after: 0, through: 40)[...])
            #expect(forked != published.rootHash)
            await Self.expectRefusal("the log's first 40 events are not the ones the latest published checkpoint in the database covers") {
                try await floor.check(size: 40, root: forked, witnessSizes: [:])
            }
        }
    }

    @Test("the file: its checkpoint is a record; one of another log, or no checkpoint at all, is refused")
    func file() async throws {
        try await withTestStore { store, client, _ in
            let signer = try NoteSigner(name: "floorfile.test/ledger")
            _ = try await store.append(.init(streamId: "f", expectedVersion: .noStream, events: (0..<12).map { event("F", $0) }))
            let tree = LogTree(client: client, logger: Self.logger)
            let root12 = MerkleTree.root(leafHashes: try await tree.leafHashesFromEvents(after: 0, through: 12)[...])
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-floor-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = CheckpointFile(url: folder.appendingPathComponent("published-checkpoint"))
            let floor = CheckpointFloor(file: file, tree: tree, origin: signer.name, logger: Self.logger)

            // A checkpoint of 20 in the file, the database knowing none: the file alone refuses 12.
            let otherRoot = MerkleTree.root(leafHashes: (0..<20).map { MerkleTree.leafHash([UInt8($0)]) }[...])
            try file.write(try signer.sign(Checkpoint(origin: signer.name, size: 20, rootHash: otherRoot).text))
            #expect(try await floor.bounds(witnessSizes: [:]).map(\.source) == ["the checkpoint in \(file.url.path)"])
            await Self.expectRefusal("events 13…20 are missing") { try await floor.check(size: 12, root: root12, witnessSizes: [:]) }
            // Never made smaller by a later write.
            try file.write(try signer.sign(Checkpoint(origin: signer.name, size: 12, rootHash: root12).text))
            #expect(try file.checkpoint()?.size == 20)

            try FileManager.default.removeItem(at: file.url)
            try file.write(try signer.sign(Checkpoint(origin: signer.name, size: 12, rootHash: root12).text))
            try await floor.check(size: 12, root: root12, witnessSizes: [:])

            let stranger = try NoteSigner(name: "other.test/ledger")
            try Data(try stranger.sign(Checkpoint(origin: stranger.name, size: 12, rootHash: root12).text).utf8).write(to: file.url)
            await Self.expectRefusal("holds a checkpoint of the log other.test/ledger") {
                try await floor.check(size: 12, root: root12, witnessSizes: [:])
            }
            try Data("not a note".utf8).write(to: file.url)
            await Self.expectRefusal("does not hold a checkpoint") { try await floor.check(size: 12, root: root12, witnessSizes: [:]) }
        }
    }

    @Test("witnesses' sizes: a larger one names the missing range; one past every record refuses larger trees")
    func witnessSizes() async throws {
        try await withTestStore { store, client, _ in
            let signer = try NoteSigner(name: "floorwitness.test/ledger")
            _ = try await store.append(.init(streamId: "f", expectedVersion: .noStream, events: (0..<40).map { event("F", $0) }))
            let published = try await VerifiableLogTests.withCheckpointer(client, signer: signer) {
                try await VerifiableLogTests.checkpointAtHead(client, store, signer.verifier)
            }
            let floor = CheckpointFloor(
                file: nil, tree: LogTree(client: client, logger: Self.logger), origin: signer.name, logger: Self.logger)
            // Sizes this database records (or less) pass: the witness itself checks the proof it is sent.
            try await floor.check(size: 40, root: published.rootHash, witnessSizes: ["W1": 40, "W2": 12, "W3": 0])
            await Self.expectRefusal("the log holds 40 events; witness W1 covers 50: events 41…50 are missing") {
                try await floor.check(size: 40, root: published.rootHash, witnessSizes: ["W1": 50, "W2": 40])
            }
            // The log grown past the witness's 50, but no record here has the root of 50.
            _ = try await store.append(.init(streamId: "g", expectedVersion: .noStream, events: (0..<20).map { event("G", $0) }))
            let tree = LogTree(client: client, logger: Self.logger)
            let root60 = MerkleTree.root(leafHashes: try await tree.leafHashesFromEvents(after: 0, through: 60)[...])
            await Self.expectRefusal(
                "witness W1 has cosigned a checkpoint of 50 events, more than any checkpoint recorded here (40 events)"
            ) {
                try await floor.check(size: 60, root: root60, witnessSizes: ["W1": 50])
            }
        }
    }
}
