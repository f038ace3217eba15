import Logging
import Metrics

/// The checkpointer's refusal to sign, send or publish a tree that would fork the log under its
/// key: one that does not extend its floor (`CheckpointFloor`: the checkpoint file, the
/// database's latest published and signed checkpoints, the witnesses' sizes), one whose size
/// already has a checkpoint with another root, or one a witness holds a tree against. Each is
/// logged (critical) and counted in `ledger_checkpoint_fork_refusals_total{log}` (alert
/// `LedgerCheckpointForkRefused`; `log` is the log's origin, so tests running several logs in one
/// process tell theirs apart); the checkpointer looks again after `retry`, in case an operator
/// restored the missing events.
public struct ForkRefusal: Error, CustomStringConvertible {
    public var description: String

    static let metric = "ledger_checkpoint_fork_refusals_total"
    /// How long a refusal stands before the checkpointer looks again (appends do not wake it).
    static let retry: Duration = .seconds(10)

    /// The refusals of the log `origin`.
    static func counter(_ origin: String) -> Counter { Counter(label: metric, dimensions: [("log", origin)]) }

    /// Logs and counts the refusal of the log `origin`; the error to throw.
    static func refuse(_ problem: String, log origin: String, logger: Logger, metadata: Logger.Metadata) -> ForkRefusal {
        counter(origin).increment()
        var metadata = metadata
        metadata["why"] = "\(problem)"
        logger.critical("checkpointer: refusing to sign a tree that would fork the log", metadata: metadata)
        return ForkRefusal(description: "fork refused: \(problem)")
    }
}
