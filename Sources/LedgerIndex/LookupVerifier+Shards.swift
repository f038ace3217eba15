import LedgerDomain
import LedgerWire
import TransparencyLog

extension LookupVerifier {
    /// Checks an identity's lookup across shards (`ShardedIndexLookup`; docs/TRUST.md, "An
    /// identity across shards"): each shard's answer as `verify(_:key:asked:at:)` checks one
    /// (both levels, and the partition map its top entry names), then every answer under one map
    /// (the same position of the top log), and the answers' shards exactly the shards that map
    /// names, each once. Then the listed events are every event naming the identity in every
    /// shard's log, each complete through its own revision (or recorded by `at`; `timesRiseFrom`
    /// as `verify(_:key:asked:through:at:shard:timesRiseFrom:)` takes it). Answers are
    /// read under the top checkpoints they carry, which may differ; a witness policy on each is
    /// what keeps them one top log.
    public static func verify(
        _ sharded: ShardedIndexLookup, key verifier: NoteVerifier, asked: IndexKey, at: Int64? = nil, timesRiseFrom: Int64 = 1
    ) throws(Failure) -> [Report] {
        guard let identity = IndexKey.identity(base64: sharded.identity), identity == asked else {
            throw Failure(description: "key: the answer is for \(sharded.identity), not \(asked)")
        }
        var reports: [Report] = []
        for (offset, answer) in sharded.shards.enumerated() {
            do {
                reports.append(
                    try verify(
                        answer, key: verifier, asked: asked, through: nil, at: at, shard: nil, timesRiseFrom: timesRiseFrom, part: true))
            } catch {
                throw Failure(description: "answer \(offset + 1): \(error.description)")
            }
        }
        // Verified above: each answer carries the map its top entry names. One map: one position,
        // and one leaf there (answers under different top checkpoints could carry different ones).
        let positions = Set(sharded.shards.compactMap { $0.map?.inclusion.position })
        let leaves = Set(sharded.shards.compactMap { $0.map?.leaf })
        guard positions.count == 1, leaves.count == 1, let entry = sharded.shards.first?.map, let bytes = Base64.decode(entry.leaf),
            let event = EventLeaf.event(from: bytes),
            let map = try? ShardMapRecorded.entry(type: event.type, streamId: event.streamId, data: event.data)
        else {
            throw Failure(
                description:
                    "map: the answers are under \(max(positions.count, leaves.count)) partition maps (top log positions \(positions.sorted())), not one: ask again once every shard's checkpoint names the latest"
            )
        }
        let named = Set(map.partitions).sorted()
        let answered = reports.compactMap(\.shard)
        guard answered == named else {
            throw Failure(
                description:
                    "shards: the deployment's map (top log position \(entry.inclusion.position)) names shards \(named), the answers are of \(answered)"
            )
        }
        return reports
    }
}
