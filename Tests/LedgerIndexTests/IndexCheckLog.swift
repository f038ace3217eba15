import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex

/// A log for `scripts/index-check` and `LogIndex` to read alike: a simulated log with, among its
/// events, data at the edges of the map function's JSON rules and leaves at the edges of the leaf
/// format; inner positions that are mostly not the leaves' places (the index reads the place);
/// revision records every so often, their roots from `LogIndex`; and, when asked, one record at
/// fault (the third), every other claim true, so the script's refusal can only be that record's.
struct IndexCheckLog {
    enum Fault: String, CaseIterable, Sendable, CustomStringConvertible {
        /// A root that is not the index's at the record's N.
        case wrongRoot
        /// The previous record's N again, as an append retried or duplicated would write it.
        case repeatedSize
        /// An N below the previous record's.
        case sizeBelowPrevious
        /// An N equal to the record's own position.
        case sizeAtOwnPosition
        /// Data that is not exactly `{"logSize":N,"root":"R"}`: a space after the colon.
        case malformed

        var description: String { rawValue }
    }

    private(set) var leaves: [[UInt8]] = []
    /// The roots given to the script beside the records': (N, the index root over 1 … N).
    private(set) var roots: [(Int, Hash256)] = [(0, .zero)]
    /// The line the script must print for the fault asked for; nil if none was put in.
    private(set) var failure: String?
    private var random: SeededRandom
    private let index = LogIndex(store: MemoryNodeStore())
    private var folded = 0
    private var rootAt: [Int: Hash256] = [0: .zero]
    private var recorded: [Int] = []

    init(seed: UInt64, fault: Fault? = nil) async throws {
        random = SeededRandom(seed: seed)
        var simulated = SimulatedLog(seed: seed, collaborations: 40, eventsEach: 40)
        for (n, data) in IndexCheckEdges.data().enumerated() {
            simulated.append(stream: "collaboration-edge-\(n % 3)", type: "IdentityAdded", data: data, version: Int64(n + 1))
        }
        var pending = simulated.leaves
        // In the first half, so that events yielding keys follow each (a leaf skipped would move them).
        for leaf in IndexCheckEdges.leaves() { pending.insert(leaf, at: Int(random.next() % UInt64(pending.count / 2))) }
        for leaf in pending {
            append(leaf)
            guard random.next() % 97 == 0 else { continue }
            let root = try await fold()
            if random.next() % 2 == 0 {
                roots.append((leaves.count, root))
            } else {
                try record(root, fault: recorded.count == 2 && failure == nil ? fault : nil)
            }
        }
        roots.append((leaves.count, try await fold()))
    }

    /// Appends a leaf; an event's inner position is set to its place one time in two, else kept
    /// (the simulator's own, behind its place once any leaf is put in) or made up.
    private mutating func append(_ leaf: [UInt8]) {
        guard var event = EventLeaf.event(from: leaf) else { return leaves.append(leaf) }
        switch random.next() % 4 {
        case 0, 1: event.position = Int64(leaves.count + 1)
        case 2: event.position = Int64(bitPattern: random.next())
        default: break
        }
        leaves.append(EventLeaf.bytes(event))
    }

    /// Folds the leaves appended since the last fold into the index and answers its root.
    private mutating func fold() async throws -> Hash256 {
        let root = try await index.append(leaves[folded...], from: Int64(folded + 1))
        folded = leaves.count
        rootAt[folded] = root
        return root
    }

    /// Appends a revision record of the index at the current size, `root`, or `fault`'s record.
    private mutating func record(_ root: Hash256, fault: Fault?) throws {
        let (size, position) = (leaves.count, leaves.count + 1)
        let previous = recorded.last ?? -1
        var data = try IndexRevision(logSize: Int64(size), root: root).data
        func order(_ wrong: Int) throws -> String {
            failure = "FAIL: position \(position) records log size \(wrong), not after \(previous) and before itself"
            return try IndexRevision(logSize: Int64(wrong), root: rootAt[wrong] ?? root).data
        }
        switch fault {
        case nil: recorded.append(size)
        case .wrongRoot?:
            let wrong = random.hash()
            data = try IndexRevision(logSize: Int64(size), root: wrong).data
            failure =
                "FAIL: at log size \(size) the index root is \(root.base64); the record at position \(position) root is "
                + wrong.base64
        case .repeatedSize?: data = try order(previous)
        case .sizeBelowPrevious?: data = try order(recorded[0])
        case .sizeAtOwnPosition?: data = try order(position)  // the record yields no key: the root at `size`
        case .malformed?:
            data = data.replacingOccurrences(of: #""logSize":"#, with: #""logSize": "#)
            failure = "FAIL: position \(position): a revision record whose data is not"
        }
        var record = SimulatedLog()
        record.append(stream: IndexRevision.stream, type: IndexRevision.type, data: data)
        append(record.leaves[0])
    }
}

extension IndexRevision {
    /// The revision a leaf records, if it records one.
    static func recorded(in leaf: [UInt8]) -> IndexRevision? {
        guard let event = EventLeaf.event(from: leaf) else { return nil }
        return try? IndexRevision(streamId: event.streamId, type: event.type, data: event.data)
    }
}
