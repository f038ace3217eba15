import LedgerPostgres
import Logging
import Metrics

/// Append figures for `/metrics`: group-commit transaction latency, events and appends per
/// transaction (the batch size), and the events appended, by shard (`ShardMetrics`: the
/// `LedgerCheckpointStale` alert compares each shard's appends with its own checkpoints).
struct AppendMetrics: Sendable {
    static let groupEvents = Recorder(label: "ledger_append_group_events")
    static let groupAppends = Recorder(label: "ledger_append_group_appends")
    static let latency = Timer(label: "ledger_append_duration")
    let events: Counter

    init(logger: Logger) {
        events = Counter(label: "ledger_appended_events_total", dimensions: ShardMetrics.dimensions(logger))
    }

    func record(events count: Int, appends: Int, duration: Duration) {
        Self.groupEvents.record(count)
        Self.groupAppends.record(appends)
        Self.latency.record(duration: duration)
        events.increment(by: count)
    }
}
