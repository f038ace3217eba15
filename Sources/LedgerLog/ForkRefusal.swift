import Logging
import Metrics

/// The checkpointer's refusal to sign a tree that would fork the log under its key: one that does
/// not extend the last published checkpoint (`LastPublishedCheckpoint`), or whose size already
/// has a checkpoint with another root. Each is logged (critical) and counted in
/// `ledger_checkpoint_fork_refusals_total` (alert `LedgerCheckpointForkRefused`); the
/// checkpointer looks again after `retry`, in case an operator restored the missing events.
public struct ForkRefusal: Error, CustomStringConvertible {
    public var description: String

    static let metric = "ledger_checkpoint_fork_refusals_total"
    /// How long a refusal stands before the checkpointer looks again (appends do not wake it).
    static let retry: Duration = .seconds(10)

    /// Logs and counts the refusal; the error to throw.
    static func refuse(_ problem: String, logger: Logger, metadata: Logger.Metadata) -> ForkRefusal {
        Counter(label: metric).increment()
        var metadata = metadata
        metadata["why"] = "\(problem)"
        logger.critical("checkpointer: refusing to sign a tree that would fork the log", metadata: metadata)
        return ForkRefusal(description: "not signing: \(problem)")
    }
}
