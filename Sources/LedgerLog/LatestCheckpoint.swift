import LedgerStore
import Synchronization
import TransparencyLog

/// The latest signed checkpoint as this process last read it, so a proof costs one query.
///
/// Signed sizes only grow: a cached checkpoint of size S proves that every size up to S is
/// signed, for ever. A request past S reads again before it is refused; only "the latest"
/// itself may be up to `maxAge` old, which any answer about a growing log is anyway.
public final class LatestCheckpoint: Sendable {
    let tree: LogTree
    let maxAge: Duration
    private let cached = Mutex<(checkpoint: LogTree.StoredCheckpoint, read: ContinuousClock.Instant)?>(nil)

    public init(tree: LogTree, maxAge: Duration = .milliseconds(250)) {
        self.tree = tree
        self.maxAge = maxAge
    }

    /// The latest checkpoint, at least `size` large if one is; nil when none is signed yet.
    public func get(atLeast size: Int64 = 0) async throws -> LogTree.StoredCheckpoint? {
        if let (checkpoint, read) = cached.withLock({ $0 }), checkpoint.size >= size, ContinuousClock.now - read < maxAge || size > 0 {
            return checkpoint
        }
        let latest = try await tree.latestCheckpoint()
        if let latest {
            cached.withLock { current in
                if current == nil || current!.checkpoint.size <= latest.size { current = (latest, .now) }
            }
        }
        return latest
    }
}
