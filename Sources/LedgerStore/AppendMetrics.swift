import Metrics

/// Append figures for `/metrics`: group-commit transaction latency, and events and appends
/// per transaction (the batch size).
enum AppendMetrics {
    static let groupEvents = Recorder(label: "ledger_append_group_events")
    static let groupAppends = Recorder(label: "ledger_append_group_appends")
    static let latency = Timer(label: "ledger_append_duration")
    static let events = Counter(label: "ledger_appended_events_total")

    static func record(events count: Int, appends: Int, duration: Duration) {
        groupEvents.record(count)
        groupAppends.record(appends)
        latency.record(duration: duration)
        events.increment(by: count)
    }
}
