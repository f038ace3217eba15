import LedgerDeviceSimulator
import LedgerIndex
import LedgerIndexStore
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// The index folded into PostgreSQL: after every batch, the stored root, size and values equal
/// the in-memory index's (`LedgerIndex` alone, over leaves written in Swift) and a full rebuild;
/// a batch cut short mid-transaction leaves the previous size and root; folders racing fold each
/// position once.
@Suite("Index folder")
struct IndexFolderTests {
    static let logger = Logger(label: "index-store-test")

    /// Checks the stored index against `memory` at the size it covers: the state, the root the
    /// stored nodes make, the values of 40 keys (the root's equality already covers every value;
    /// these name a difference) and a proof of one present and one absent key.
    static func expectEqual(_ reader: IndexReader, _ memory: MemoryIndex, size: Int64, root: Hash256) async throws {
        let tree = PrefixTree(store: memory.memory)
        var values: [Hash256: Hash256?] = [:]
        for key in memory.keys.map(\.hash).sorted().prefix(40) { values[key] = try await tree.value(of: key) }
        let absent = IndexKey.collaboration("never-in-the-log").hash
        let present = values.first
        let (state, storedRoot, stored, proofs) = try await reader.read { state, tree in
            var stored: [Hash256: Hash256?] = [:]
            for key in values.keys { stored[key] = try await tree.value(of: key) }
            var found: PrefixProof?
            if let key = present?.key { found = try await tree.proof(for: key) }
            let proofs = (found, try await tree.proof(for: absent))
            return (state, try await tree.root(), stored, proofs)
        }
        #expect(state == IndexState(logSize: size, root: root))
        #expect(storedRoot == root)
        #expect(stored == values)
        if let (key, value) = present, let proof = proofs.0 {
            #expect(try proof.verify(key: key, root: root) == .present(value: value!))
        }
        #expect(try proofs.1.verify(key: absent, root: root) == .absent)
    }

    @Test("after each batch the stored root equals the in-memory index and a full rebuild", arguments: [1 as UInt64, 2, 3])
    func batchesEqualMemory(seed: UInt64) async throws {
        try await withTestStore { store, client, _ in
            let reader = IndexReader(client: client, logger: Self.logger)
            #expect(try await reader.state() == .empty)
            var events = SimulatedEvents(seed: seed)
            var memory = MemoryIndex(store: store)
            var random = SeededRandom(seed: seed)
            var batches = 0
            // The log grows between folds: three rounds of appends, each folded in batches of
            // random sizes (a batch of 1 included).
            for round in 0..<3 {
                try await events.append(600 + round * 300, to: store)
                while true {
                    let size = round == 0 && batches == 0 ? 1 : 1 + Int(random.next() % 400)
                    let outcome = try await IndexFolder(client: client, logger: Self.logger, batchSize: size).fold()
                    guard case .folded(let from, let state) = outcome else {
                        #expect(outcome == .upToDate(try await reader.state()))
                        break
                    }
                    batches += 1
                    #expect(from == Int64(memory.leaves.count))
                    #expect(state.logSize == min(from + Int64(size), try await store.head().position))
                    let root = try await memory.fold(through: state.logSize)
                    #expect(state.root == root, "batch \(batches): \(from + 1) … \(state.logSize)")
                    try await Self.expectEqual(reader, memory, size: state.logSize, root: root)
                }
            }
            let head = try await store.head().position
            #expect(Int64(memory.leaves.count) == head)
            #expect(batches > 6)
            #expect(memory.keys.count > 100)
            #expect(try await reader.state() == IndexState(logSize: head, root: try await memory.rebuild()))
        }
    }

    @Test("a batch that fails after writing its nodes leaves the previous size, root and values")
    func interruptedBatch() async throws {
        try await withTestStore { store, client, _ in
            var events = SimulatedEvents(seed: 7)
            try await events.append(900, to: store)
            let reader = IndexReader(client: client, logger: Self.logger)
            var memory = MemoryIndex(store: store)
            let first = try await IndexFolder(client: client, logger: Self.logger, batchSize: 300).fold()
            guard case .folded(_, let committed) = first else { throw IndexStoreError("nothing folded: \(first)") }
            let root = try await memory.fold(through: committed.logSize)

            struct Injected: Error {}
            let failing = IndexFolder(
                client: client, logger: Self.logger, batchSize: 300,
                hooks: .init(afterNodes: { from, through in
                    #expect(from == committed.logSize + 1 && through == committed.logSize + 300)
                    throw Injected()
                }))
            await #expect(throws: Injected.self) { try await failing.fold() }
            // Every node the failed batch wrote was rolled back with it: the values of the keys
            // it changed are the previous ones.
            try await Self.expectEqual(reader, memory, size: committed.logSize, root: root)
            await #expect(throws: Injected.self) { try await failing.fold() }

            let (outcome, batches) = try await IndexFolder(client: client, logger: Self.logger, batchSize: 300).catchUp()
            #expect(batches >= 2)
            let head = try await store.head().position
            let full = try await memory.fold(through: head)
            #expect(outcome == .upToDate(IndexState(logSize: head, root: full)))
            try await Self.expectEqual(reader, memory, size: head, root: full)
        }
    }

    @Test("a folder finds the state row held by another at work busy, and writes nothing")
    func busyWhileAnotherFolds() async throws {
        try await withTestStore { store, client, _ in
            var events = SimulatedEvents(seed: 11)
            try await events.append(200, to: store)
            let second = IndexFolder(client: client, logger: Self.logger, batchSize: 50)
            let seen = OutcomeBox()
            // The second folder runs while the first holds the state row, its nodes written
            // and its size not yet.
            let first = IndexFolder(
                client: client, logger: Self.logger, batchSize: 50,
                hooks: .init(afterNodes: { _, _ in await seen.set(try await second.fold()) }))
            let outcome = try await first.fold()
            #expect(await seen.value == .busy)
            guard case .folded(0, let state) = outcome else { throw IndexStoreError("first fold: \(outcome)") }
            #expect(state.logSize == 50)
            #expect(try await IndexReader(client: client, logger: Self.logger).state() == state)
            // Once it committed, the second folds the next batch.
            guard case .folded(50, let next) = try await second.fold() else { throw IndexStoreError("the second did not fold after") }
            #expect(next.logSize == 100)
        }
    }

    @Test("four folders racing while the log grows fold each position once, into the full rebuild")
    func racingFolders() async throws {
        try await withTestStore { store, client, _ in
            var events = SimulatedEvents(seed: 13)
            try await events.append(500, to: store)
            let writer = events
            let folded = try await withThrowingTaskGroup(of: [IndexFolder.Outcome].self) { group in
                group.addTask {
                    var more = writer
                    try await more.append(1_000, to: store)
                    return []
                }
                for folder in 0..<4 {
                    group.addTask {
                        let index = IndexFolder(client: client, logger: Self.logger, batchSize: 40 + folder * 25)
                        var outcomes: [IndexFolder.Outcome] = []
                        for _ in 0..<60 { outcomes.append(try await index.fold()) }
                        return outcomes
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            _ = try await IndexFolder(client: client, logger: Self.logger).catchUp()
            // The committed batches, in order, cover 1 … their last size with no gap and no overlap.
            var ranges: [(from: Int64, to: Int64)] = []
            for case .folded(let from, let state) in folded { ranges.append((from, state.logSize)) }
            ranges.sort { $0.from < $1.from }
            #expect(ranges.first?.from == 0)
            for (a, b) in zip(ranges, ranges.dropFirst()) { #expect(a.to == b.from) }
            #expect(ranges.count > 10)
            var memory = MemoryIndex(store: store)
            let head = try await store.head().position
            let root = try await memory.fold(through: head)
            #expect(root == (try await memory.rebuild()))
            try await Self.expectEqual(IndexReader(client: client, logger: Self.logger), memory, size: head, root: root)
        }
    }
}

/// One outcome, set from inside a fold's hook.
actor OutcomeBox {
    var value: IndexFolder.Outcome?
    func set(_ outcome: IndexFolder.Outcome) { value = outcome }
}
