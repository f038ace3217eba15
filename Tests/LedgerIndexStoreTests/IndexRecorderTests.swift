import LedgerDomain
import LedgerIndex
import LedgerIndexStore
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// Revisions kept and recorded: a lookup under a recorded revision lists exactly the positions a
/// full scan of the leaves finds and proves them under that revision's root, however far the
/// index has moved on; records rise strictly, racing recorders included.
@Suite("Index recorder")
struct IndexRecorderTests {
    static let logger = Logger(label: "index-recorder-test")

    /// Every key `memory` holds (and one it does not), looked up under `revision`: the listing
    /// verifies, and its positions are a full scan's of the leaves up to the revision's size.
    static func expectLookups(_ reader: IndexReader, _ memory: MemoryIndex, revision: IndexRevision) async throws {
        let leaves = memory.leaves.prefix(Int(revision.logSize))
        var scan: [IndexKey: [Int64]] = [:]
        for (offset, leaf) in leaves.enumerated() {
            for key in IndexMap.keys(leaf: leaf) { scan[key, default: []].append(Int64(offset + 1)) }
        }
        for key in Array(memory.keys) + [.collaboration("never-in-the-log")] {
            let (proof, positions) = try await reader.lookup(key, revision: revision)
            let listing = KeyListing(
                revision: revision, proof: proof,
                listed: positions.map { KeyListing.Listed(position: $0, leaf: memory.leaves[Int($0) - 1]) })
            #expect(try listing.verify(key: key) == scan[key, default: []], "\(key) under \(revision.logSize)")
        }
    }

    /// The revisions recorded in `ledger-index`, in order, each with its own position.
    static func records(_ store: EventStore) async throws -> [(position: Int64, revision: IndexRevision)] {
        try await store.readStream(IndexRevision.stream).map { event in
            (event.position, try IndexRevision(streamId: event.streamId, type: event.type, data: event.data))
        }
    }

    @Test("a lookup under a recorded revision equals a full scan, proven under its root after the index moves")
    func lookupsUnderRecordedRevisions() async throws {
        try await withTestStore { store, client, _ in
            var events = SimulatedEvents(seed: 31)
            let recorder = IndexRecorder(client: client, events: store, batchSize: 150, logger: Self.logger)
            let folder = IndexFolder(client: client, logger: Self.logger, batchSize: 150)
            var revisions: [IndexRevision] = []
            for _ in 0..<3 {
                try await events.append(500, to: store)
                _ = try await folder.catchUp()
                revisions.append(try #require(try await recorder.record()))
                #expect(try await recorder.record() == nil, "nothing new: no second record")
            }
            // The records alone, folded: nothing new to record (an idle log stays idle).
            _ = try await folder.catchUp()
            #expect(try await recorder.record() == nil)
            try await events.append(300, to: store)
            _ = try await folder.catchUp()  // folded past the last record, not kept
            var memory = MemoryIndex(store: store)
            let head = try await store.head().position
            _ = try await memory.fold(through: head)
            #expect(Set(revisions.map(\.root)).count == 3)
            // Each recorded revision is the index of the log up to its size, and its record lies past it.
            let recorded = try await Self.records(store)
            #expect(recorded.map(\.revision) == revisions)
            for (position, revision) in recorded {
                #expect(revision.logSize < position)
                #expect(
                    try await LogIndex(store: MemoryNodeStore()).append(memory.leaves.prefix(Int(revision.logSize)), from: 1)
                        == revision.root)
                try await Self.expectLookups(IndexReader(client: client, logger: Self.logger), memory, revision: revision)
            }
            // A revision never kept is refused, not answered from nodes later folds rewrote: past
            // the kept size, or below it (between two records, its rows rewritten by the folds after it).
            let reader = IndexReader(client: client, logger: Self.logger)
            let unkept = try IndexRevision(logSize: head, root: try await memory.rebuild())
            await #expect(throws: IndexStoreError.self) { try await reader.lookup(.collaboration("x"), revision: unkept) }
            let between = (revisions[0].logSize + revisions[1].logSize) / 2
            let betweenRoot = try await LogIndex(store: MemoryNodeStore()).append(memory.leaves.prefix(Int(between)), from: 1)
            await #expect(throws: IndexStoreError.self) {
                try await reader.lookup(.collaboration("x"), revision: try IndexRevision(logSize: between, root: betweenRoot))
            }
        }
    }

    @Test("recorders racing while the log grows record strictly rising revisions, each below its own position")
    func racingRecorders() async throws {
        try await withTestStore { store, client, _ in
            var events = SimulatedEvents(seed: 37)
            try await events.append(300, to: store)
            let writer = events
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    var more = writer
                    try await more.append(900, to: store)
                }
                for index in 0..<3 {
                    group.addTask {
                        let recorder = IndexRecorder(client: client, events: store, logger: Self.logger)
                        let folder = IndexFolder(client: client, logger: Self.logger, batchSize: 60 + index * 40)
                        for _ in 0..<25 {
                            _ = try await folder.fold()
                            _ = try await recorder.record()
                        }
                    }
                }
                try await group.waitForAll()
            }
            let recorded = try await Self.records(store)
            #expect(recorded.count > 3)
            for (a, b) in zip(recorded, recorded.dropFirst()) { #expect(a.revision.logSize < b.revision.logSize) }
            var memory = MemoryIndex(store: store)
            _ = try await memory.fold(through: try await store.head().position)
            for (position, revision) in recorded {
                #expect(revision.logSize < position)
                #expect(
                    try await LogIndex(store: MemoryNodeStore()).append(memory.leaves.prefix(Int(revision.logSize)), from: 1)
                        == revision.root)
            }
            try await Self.expectLookups(IndexReader(client: client, logger: Self.logger), memory, revision: recorded.last!.revision)
        }
    }
}
