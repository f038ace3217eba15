import Metrics

enum AuthFailures {
    static let count = Counter(label: "ledger_auth_failures_total")
}
