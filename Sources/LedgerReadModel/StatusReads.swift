import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerWire
import Logging
import PostgresNIO

/// The views' and the expiry service's health as `GET /v1/log/status` shows it. The queries
/// are the services' own (`ProjectionQueries.status`, `ExpiryQueries.status`: the projector's
/// lag gauges and the expiry service's status read the same), so the HTTP layer needs neither.
public struct StatusReads: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Each view's position, lag and state.
    public func projections() async throws -> [LogStatus.Projection] {
        try await ProjectionQueries.status(client: client, logger: logger).map {
            LogStatus.Projection(
                name: $0.name, position: $0.position, lagEvents: $0.lagEvents, lagSeconds: $0.lagSeconds, status: $0.status)
        }
    }

    /// Whether the expiry service runs, who holds its lease, the next window due and the overdue count.
    public func expiry() async throws -> LogStatus.Expiry {
        try await ExpiryQueries(client: client, logger: logger).status()
    }
}
