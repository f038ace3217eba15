import Logging
import Metrics

/// The `shard` dimension of what a shard's workers record for `/metrics`: the logger's `shard`
/// metadata (`LedgerProcess.shardServices` names each shard's logger `0`, `1`, …, and the top log's
/// `top`), empty on one database, which Prometheus reads as no label at all.
///
/// A gauge keeps the last value recorded into its series, and every shard's workers run in one
/// process: without the dimension the last shard to record would win, and an overdue window or a
/// stopped projection on one shard would read as another's 0 (the alerts read these gauges).
/// The dimension is always there, empty or not, because a metric family is either labelled or not
/// for the whole process (swift-prometheus stops the process otherwise).
public enum ShardMetrics {
    /// `dimensions` with the logger's shard added.
    public static func dimensions(_ logger: Logger, _ dimensions: [(String, String)] = []) -> [(String, String)] {
        dimensions + [("shard", logger[metadataKey: "shard"].map { "\($0)" } ?? "")]
    }

    /// The gauge `label` of the logger's shard.
    public static func gauge(_ label: String, _ logger: Logger, _ dimensions: [(String, String)] = []) -> Gauge {
        Gauge(label: label, dimensions: Self.dimensions(logger, dimensions))
    }
}
