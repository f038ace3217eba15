import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex

/// A log of leaves as the ledger writes them: the simulator's collaborations (starts, adds,
/// grants, removals, windows, expiries, highlights, refusals) interleaved at random, identities
/// invited into a second collaboration, and events of other streams (erasures, the top log's
/// records). Beside it, what a full scan of the events says each key lists, read through the
/// domain's own types, not the map function.
struct SimulatedLog {
    var leaves: [[UInt8]] = []
    /// Every key's positions, in order, from the decoded events.
    var expected: [IndexKey: [Int64]] = [:]

    init() {}

    init(seed: UInt64, collaborations: Int, eventsEach: Int) {
        var simulator = LogSimulator(seed: seed, lifecycle: true)
        var random = SeededRandom(seed: seed ^ 0xA5A5)
        var pending = (0..<collaborations).map { _ in simulator.collaboration(events: eventsEach) }
        var versions = [String: Int64]()
        var shared: [RootHash] = []
        while !pending.isEmpty {
            let pick = Int(random.next() % UInt64(pending.count))
            var event = pending[pick].events.removeFirst()
            let id = pending[pick].id
            if pending[pick].events.isEmpty { pending.remove(at: pick) }
            switch random.next() % 16 {
            case 0 where !shared.isEmpty:  // an identity of another collaboration, invited here too
                event = .identityAdded(.init(rootHash: shared[Int(random.next() % UInt64(shared.count))]))
            case 1:
                append(stream: "privacy", type: "PersonalDataErased", data: #"{"pseudonym":"psn-1","reason":"T-1","requester":"psn-2"}"#)
            case 2:  // the top log's record holds a "rootHash" of its own: not an identity
                let root = Data(random.bytesForTest(32)).base64EncodedString()
                append(stream: "shard-0", type: ShardCheckpointRecorded.type, data: #"{"rootHash":"\#(root)","shard":0}"#)
            default: break
            }
            if case .identityAdded(let added) = event { shared.append(added.rootHash) }
            let stream = Streams.collaboration(id)
            versions[stream, default: 0] += 1
            append(stream: stream, type: event.type, data: event.json, version: versions[stream]!)
            expected[.collaboration(id), default: []].append(Int64(leaves.count))
            for rootHash in Self.named(by: event) where !(expected[.identity(rootHash)]?.last == Int64(leaves.count)) {
                expected[.identity(rootHash), default: []].append(Int64(leaves.count))
            }
        }
    }

    /// Appends one event's leaf at the next position.
    mutating func append(stream: String, type: String, data: String, version: Int64 = 1) {
        let position = Int64(leaves.count + 1)
        leaves.append(
            EventLeaf.bytes(
                position: position, streamId: stream, version: version, eventId: Identifiers.derivedUUID("\(position)"), type: type,
                data: data, metadata: #"{"actor":"psn-test"}"#, recordedAtMicros: 1_767_225_600_000_000 + position))
    }

    /// The identities an event names, by the domain's types: every case, so a new event type
    /// does not compile here until someone says which identities it names.
    static func named(by event: CollaborationEvent) -> [Hash256] {
        let named: [RootHash] =
            switch event {
            case .started: []
            case .identityAdded(let e): [e.rootHash]
            case .identityRemoved(let e): [e.rootHash]
            case .accessGranted(let e): [e.rootHash]
            case .accessRevoked(let e): [e.rootHash]
            case .proofRejected(let e): e.rootHash.map { [$0] } ?? []
            case .highlightPosted(let e): e.mentionedRootHash.map { [$0] } ?? []
            case .accessWindowChanged(let e): [e.rootHash]
            case .accessExpired(let e): [e.rootHash]
            }
        return named.map { Hash256($0.bytes)! }
    }

    /// The pairs the index holds after the first `size` leaves, from the full scan.
    func pairs(upTo size: Int) -> [Hash256: Hash256] {
        var pairs: [Hash256: Hash256] = [:]
        for (key, positions) in expected {
            let entries = positions.prefix { $0 <= Int64(size) }.map { position in
                IndexValue.Entry(position: position, leafHash: leafHash(position))!
            }
            if !entries.isEmpty { pairs[key.hash] = IndexValue.chain(entries) }
        }
        return pairs
    }

    func leafHash(_ position: Int64) -> Hash256 { Hash256(Self.sha256([0x00] + leaves[Int(position - 1)]))! }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { TestHash.sha256(bytes) }
}

extension SeededRandom {
    mutating func bytesForTest(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }

    mutating func hash() -> Hash256 { Hash256(bytesForTest(32))! }
}
