import Metrics
import Prometheus

/// The process's metrics, rendered at `/metrics` in Prometheus text format.
public enum LedgerMetrics {
    public static let registry = PrometheusCollectorRegistry()

    /// Routes swift-metrics to the registry, before metrics are created; the first call of a
    /// process does it, later ones (a test process's live servers) do nothing.
    public static func bootstrap() { _ = bootstrapped }

    /// Every metric in Prometheus's text format, as `/metrics` answers.
    public static func text() -> String { registry.emitToString() }

    private static let bootstrapped: Void = MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
}
