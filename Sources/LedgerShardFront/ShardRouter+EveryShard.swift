import Hummingbird
import LedgerAPI

/// The shards of a write of every shard, which asks those that answer even while another does
/// not, and says what each did (`ShardFanOut+CutShort.swift`).
extension ShardRouter {
    /// Each shard's router (`responder`: refused with 503 once it stops answering, even while a
    /// request waits on it), nil for a shard whose database does not answer now: not asked.
    func everyShardAsked() -> [ShardFanOut.Responder?] {
        shards.indices.map { available[$0]() ? responder($0) : nil }
    }
}
