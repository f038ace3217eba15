import Metrics

/// Append figures for `/metrics`: events and appends per group-commit transaction.
enum AppendMetrics {
    static let groupEvents = Recorder(label: "ledger_append_group_events")
    static let groupAppends = Recorder(label: "ledger_append_group_appends")
    static let events = Counter(label: "ledger_appended_events_total")

    static func record(events count: Int, appends: Int) {
        groupEvents.record(count)
        groupAppends.record(appends)
        events.increment(by: count)
    }
}
