import Logging
import PostgresNIO

extension PostgresClient {
    /// `withTransaction`, throwing the error that failed it (the body's, else COMMIT's or
    /// BEGIN's) rather than PostgresNIO's wrapper, so callers classify database errors as usual.
    ///
    /// Also the way to run a write whose success is answered to a client: PostgresNIO ends a
    /// query at CommandComplete, and in autocommit the server commits only afterwards (at
    /// Sync), so a crash in between loses a write already answered. COMMIT's own completion
    /// comes after the commit.
    public func transaction<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error.commitError ?? error.beginError ?? error
        }
    }
}
