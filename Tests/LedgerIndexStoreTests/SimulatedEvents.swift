import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import LedgerStore

/// Events as the ledger appends them, for the index's store tests: the simulator's
/// collaborations (starts, adds, grants, removals, windows, expiries, highlights, refusals)
/// interleaved a few events at a time, identities invited into a second collaboration, and
/// events of streams the index ignores (erasures, the top log's records, whose data has a
/// `rootHash` of its own).
struct SimulatedEvents {
    var simulator: LogSimulator
    var random: SeededRandom
    var versions: [String: Int64] = [:]
    var shared: [RootHash] = []

    init(seed: UInt64) {
        simulator = LogSimulator(seed: seed, lifecycle: true)
        random = SeededRandom(seed: seed ^ 0x5A5A)
    }

    /// Appends about `count` events to `store`, in appends of one to five events of one stream,
    /// grouped a few at a time into one transaction.
    mutating func append(_ count: Int, to store: EventStore) async throws {
        var pending = (0..<max(1, count / 25)).map { _ in simulator.collaboration(events: 25) }
        var requests: [AppendRequest] = []
        let metadata = EventMetadata(actor: "psn-test")
        while !pending.isEmpty {
            let pick = Int(random.next() % UInt64(pending.count))
            let id = pending[pick].id
            let take = min(pending[pick].events.count, 1 + Int(random.next() % 5))
            var events = Array(pending[pick].events.prefix(take))
            pending[pick].events.removeFirst(take)
            if pending[pick].events.isEmpty { pending.remove(at: pick) }
            for (offset, event) in events.enumerated() {
                if case .identityAdded(let added) = event { shared.append(added.rootHash) }
                // An identity of another collaboration, invited here too.
                if offset > 0, random.next() % 12 == 0, !shared.isEmpty {
                    events[offset] = .identityAdded(.init(rootHash: shared[Int(random.next() % UInt64(shared.count))]))
                }
            }
            requests.append(request(Streams.collaboration(id), events.map { $0.newEvent(metadata: metadata) }))
            switch random.next() % 10 {
            case 0:
                let data = #"{"pseudonym":"psn-1","reason":"T-1","requester":"psn-2"}"#
                requests.append(request("privacy", [NewEvent(type: "PersonalDataErased", data: data, metadata: "{}")]))
            case 1:
                let root = Data((0..<32).map { _ in UInt8(truncatingIfNeeded: random.next()) }).base64EncodedString()
                let data = #"{"rootHash":"\#(root)","shard":0}"#
                requests.append(request("shard-0", [NewEvent(type: ShardCheckpointRecorded.type, data: data, metadata: "{}")]))
            default: break
            }
            if requests.count >= 8 || pending.isEmpty {
                for result in await store.appendAll(requests) { _ = try result.get() }
                requests = []
            }
        }
    }

    private mutating func request(_ stream: String, _ events: [NewEvent]) -> AppendRequest {
        let version = versions[stream, default: 0]
        versions[stream] = version + Int64(events.count)
        return AppendRequest(streamId: stream, expectedVersion: version == 0 ? .noStream : .exact(version), events: events)
    }
}

/// The index as `LedgerIndex` alone computes it, beside the stored one: the leaves read through
/// `EventStore` and written by `EventLeaf` in Swift (the folder reads them through SQL's
/// `ledger_leaf`), folded into a `MemoryNodeStore`.
struct MemoryIndex {
    let store: EventStore
    let memory = MemoryNodeStore()
    var leaves: [[UInt8]] = []
    var keys = Set<IndexKey>()

    init(store: EventStore) { self.store = store }

    /// Folds the log's leaves up to `size` in one batch; answers the root.
    mutating func fold(through size: Int64) async throws -> Hash256 {
        let events = try await store.readAll(after: Int64(leaves.count), limit: Int(size) - leaves.count)
        let new = events.map(EventLeaf.bytes)
        for leaf in new { keys.formUnion(IndexMap.keys(leaf: leaf)) }
        let root = try await LogIndex(store: memory).append(new, from: Int64(leaves.count + 1))
        leaves += new
        return root
    }

    /// The root of a rebuild of every leaf so far, in one batch, into an empty store.
    func rebuild() async throws -> Hash256 {
        try await LogIndex(store: MemoryNodeStore()).append(leaves, from: 1)
    }
}
