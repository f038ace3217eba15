import Foundation
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import Logging
import ServiceLifecycle
import TransparencyLog

/// The top log's writer (SPEC "Writes past one primary"): it records each shard's published
/// checkpoints, in order, as the top log's entries. The top log is a ledger database of its own
/// (the one the shard cluster is defined in), which the deployment's checkpointer signs, and
/// witnesses cosign, like any log: it is the list of shards and of their trees, so no published
/// list needs trusting.
///
/// Shard k's checkpoints are the stream `shard-k` of `ShardCheckpointRecorded` events, its state
/// the last one recorded. A checkpoint is recorded only if it opens with the shard's key and
/// names the size and root the shard stored, and if its tree extends the last one recorded (a
/// consistency proof read from the shard and checked here): a rewritten shard log is never
/// recorded over, and is logged. Several `ledger serve` instances may record at once: an event id
/// derives from (shard, size, map), and the stream's version orders them.
///
/// As it starts it records the partition map it serves (`ShardMapRecorded`, the stream
/// `shard-map`) if the last one recorded is another, and each entry names the map's position
/// (`ShardCheckpointRecorded.map`), a shard's last entry recorded again to name a newer map. An
/// instance that finds a map it does not serve recorded later (another started since, after a
/// move) stops recording. So the top log says which shard held which partitions when,
/// a lookup proves its shard, and an identity's lookup every shard (docs/TRUST.md).
public struct TopLogRecorder: Service {
    /// A recorded shard checkpoint: the event's data and the stream's state.
    public typealias Recorded = ShardCheckpointRecorded

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    public static let eventType = ShardCheckpointRecorded.type
    public static func stream(_ shard: Int) -> String { "shard-\(shard)" }

    let top: EventStore
    /// The partition map served, by shard index.
    let map: ShardMapRecorded
    /// Each shard's tree and checkpoint key, in the shard map's order.
    let shards: [(tree: LogTree, verifier: NoteVerifier)]
    /// Whether each shard serves now: one that does not is passed over (its pool would hold the
    /// round up to its circuit breaker's minute, and the others' checkpoints with it).
    let serving: [@Sendable () -> Bool]
    let interval: Duration
    let logger: Logger

    public init(
        top: EventStore, map: ShardMapRecorded, shards: [(tree: LogTree, verifier: NoteVerifier)],
        serving: [@Sendable () -> Bool]? = nil, interval: Duration = .milliseconds(500), logger: Logger
    ) {
        (self.top, self.map, self.shards, self.interval, self.logger) = (top, map, shards, interval, logger)
        self.serving = serving ?? shards.map { _ in { true } }
        precondition(self.serving.count == shards.count, "one `serving` per shard")
    }

    public func run() async throws {
        // The map served, recorded once as this instance starts if the last recorded is another
        // (the first start on shards, the start after `ledger shards move`); never again after,
        // so two instances serving two maps cannot overwrite each other's in turn.
        var started = false
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if !started {
                do {
                    _ = try await recordMap()
                    started = true
                } catch {
                    logger.warning("top log: the partition map not recorded", metadata: ["error": "\(DatabaseFailure.describe(error))"])
                }
            }
            for index in shards.indices where serving[index]() {
                do {
                    try await record(index)
                } catch {
                    logger.warning(
                        "top log: shard \(index)'s checkpoint not recorded", metadata: ["error": "\(DatabaseFailure.describe(error))"])
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Records shard `index`'s latest published checkpoint if it is larger than the last one
    /// recorded; true when this call recorded it.
    @discardableResult
    public func record(_ index: Int) async throws -> Bool {
        let (tree, verifier) = shards[index]
        guard let latest = try await tree.latestCheckpoint() else { return false }
        let stream = Self.stream(index)
        let state = try await top.streamState(stream)
        let last = try state?.state.map { try CanonicalJSON.decode(Recorded.self, from: $0) }
        if let last, latest.size < last.size || (latest.size == last.size && Base64.encode(latest.rootHash) != last.rootHash) {
            logger.critical(
                "top log: shard \(index) publishes a tree of \(latest.size) that is not the one recorded at \(last.size) or an extension of it; not recorded"
            )
            throw Refused(description: "shard \(index)'s published tree is not what the top log recorded, nor an extension of it")
        }
        // The same tree again only to name the map in force, for an entry recorded before it.
        let mapPosition = try await mapInForce()
        if let last, latest.size == last.size, last.map == mapPosition { return false }
        let opened = try Checkpoint.open(latest.note, verifier: verifier)
        guard opened.size == latest.size, opened.rootHash == latest.rootHash else {
            throw Refused(description: "shard \(index)'s published note names another tree than the one it stored")
        }
        if let last, latest.size > last.size {
            guard let root = Base64.decode(last.rootHash) else {
                throw Refused(description: "the recorded root of shard \(index) is not base64")
            }
            let proof = try await tree.consistencyProof(from: last.size, to: latest.size)
            do {
                try MerkleProof.verifyConsistency(size1: last.size, size2: latest.size, root1: root, root2: opened.rootHash, proof: proof)
            } catch {
                logger.critical(
                    "top log: shard \(index)'s tree of \(latest.size) does not extend the one recorded at \(last.size); not recorded",
                    metadata: ["error": "\(error)"])
                throw Refused(description: "shard \(index)'s log does not extend what the top log recorded")
            }
        }
        let recorded = Recorded(
            shard: index, origin: opened.origin, size: opened.size, rootHash: Base64.encode(opened.rootHash), checkpoint: latest.note,
            map: mapPosition)
        let json = CanonicalJSON.encode(recorded)
        let event = NewEvent(
            eventId: Identifiers.derivedUUID("shard-checkpoint\u{0}\(index)\u{0}\(opened.size)\u{0}\(mapPosition)"), type: Self.eventType,
            data: json)
        do {
            _ = try await top.append(.init(streamId: stream, expectedVersion: .exact(state?.version ?? 0), events: [event], state: json))
        } catch let error as StoreError where error.isVersionConflict || error.isIdempotencyMismatch {
            return false  // another instance recorded first: the next round reads what it did
        }
        return true
    }

    /// The top log's position of the map served, recorded first if none is; refused if the last
    /// one recorded is another: an instance started later (after `ledger shards move`) serves a
    /// newer map, and this one's is stale.
    func mapInForce() async throws -> Int64 {
        let state = try await top.streamState(ShardMapRecorded.stream)
        if let state, state.state == CanonicalJSON.encode(map) { return state.position }
        guard state == nil else {
            logger.critical(
                "top log: the partition map recorded last is not the one this instance serves (another started since with a newer one, after `ledger shards move`?): not recording; restart this instance"
            )
            throw Refused(description: "the top log's partition map is not the one this instance serves: restart it")
        }
        return try await recordMap()
    }

    /// The top log's position of the map served, recorded first if the last one recorded is
    /// another (or none is). Instances serving one map agree on its event id, so a second append
    /// of it is a duplicate; one serving another map conflicts, and reads again next time.
    func recordMap() async throws -> Int64 {
        let json = CanonicalJSON.encode(map)
        let state = try await top.streamState(ShardMapRecorded.stream)
        if let state, state.state == json { return state.position }
        let version = (state?.version ?? 0) + 1
        let event = NewEvent(
            eventId: Identifiers.derivedUUID("shard-map\u{0}\(version)\u{0}\(json)"), type: ShardMapRecorded.type, data: json)
        let appended = try await top.append(
            .init(streamId: ShardMapRecorded.stream, expectedVersion: .exact(version - 1), events: [event], state: json))
        logger.notice("top log: the partition map recorded", metadata: ["position": "\(appended.lastPosition)", "map": "\(json)"])
        return appended.lastPosition
    }
}
