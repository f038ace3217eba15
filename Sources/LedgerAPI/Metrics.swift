import Metrics
import Prometheus

enum AuthFailures {
    static let count = Counter(label: "ledger_auth_failures_total")
}

/// The process's metrics, rendered at `/metrics` in Prometheus text format.
public enum LedgerMetrics {
    public static let registry = PrometheusCollectorRegistry()

    /// Routes swift-metrics to the registry; once per process, before metrics are created.
    public static func bootstrap() {
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    }
}
