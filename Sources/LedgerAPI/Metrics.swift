import Metrics

enum AuthFailures {
    static let count = Counter(label: "ledger_auth_failures_total")
}

enum ProofMetrics {
    static func verdict(_ reason: String) {
        Counter(label: "ledger_proof_verdicts_total", dimensions: [("verdict", reason)]).increment()
    }
}
