import Logging
import PostgresNIO
import Synchronization

/// A query sent on a connection that has closed (the server ended the session, or PostgreSQL
/// went away): the database is unavailable for the moment, as with a lost connection.
public struct ConnectionClosed: Error, CustomStringConvertible {
    public var description: String { "the database connection is closed" }
}

extension PostgresConnection {
    /// `query`, failing with `ConnectionClosed` on a connection that is closed, or that closes
    /// while the query waits for its answer.
    ///
    /// Why: PostgresNIO 1.33 writes a query to the connection's channel without a promise for
    /// the write; once the channel is closed and its handlers are gone, the write fails
    /// silently and the query's answer never comes. The caller waits for ever, cancellation or
    /// not. It happens to every transaction cut by a PostgreSQL restart (its ROLLBACK goes to
    /// the dead connection) and to every query after the server ended an idle session
    /// (`ConnectionLossTests` shows both).
    @discardableResult
    public func queryUnlessClosed(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        let waiter = ClosedConnections.shared.watch(self)
        defer { ClosedConnections.shared.forget(waiter) }
        return try await withCheckedThrowingContinuation { continuation in
            guard waiter.race.begin(continuation) else { return }
            Task {
                do {
                    waiter.race.finish(.success(try await self.query(query, logger: logger, file: file, line: line)))
                } catch {
                    waiter.race.finish(.failure(error))
                }
            }
        }
    }
}

extension PostgresClient {
    /// A pooled query that cannot wait for good: run on a leased connection through
    /// `PostgresConnection.queryUnlessClosed`, its rows read by `read` while the lease is held.
    /// PostgresNIO's own `PostgresClient.query` writes the same way as its connection's and
    /// never answers when the pool hands it a connection that closed a moment before (after a
    /// PostgreSQL restart); this fails with `ConnectionClosed` instead.
    public func queryUnlessClosed<T: Sendable>(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line,
        _ read: (PostgresRowSequence) async throws -> T
    ) async throws -> T {
        try await withConnection { connection in
            try await read(try await connection.queryUnlessClosed(query, logger: logger, file: file, line: line))
        }
    }

    /// `queryUnlessClosed` for a statement whose rows, if any, are not read.
    public func executeUnlessClosed(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws {
        try await queryUnlessClosed(query, logger: logger, file: file, line: line) { _ in }
    }
}

extension PostgresClient {
    /// A transaction on a leased connection: BEGIN, `body`, COMMIT; ROLLBACK when `body` throws.
    /// Throws the error that failed it (the body's, else COMMIT's or BEGIN's), so callers
    /// classify database errors as usual.
    ///
    /// Not PostgresNIO's `withTransaction`: after a body cut by a lost connection it sends
    /// ROLLBACK to that dead connection and waits for ever (see `queryUnlessClosed`). Here a
    /// closed connection skips the ROLLBACK (the server rolled back when the session ended),
    /// and one whose ROLLBACK fails is closed rather than pooled mid-transaction.
    ///
    /// Also the way to run a write whose success is answered to a client: PostgresNIO ends a
    /// query at CommandComplete, and in autocommit the server commits only afterwards (at
    /// Sync), so a crash in between loses a write already answered. COMMIT's own completion
    /// comes after the commit.
    public func transaction<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await withConnection { connection in
            try await connection.queryUnlessClosed("BEGIN", logger: logger)
            let value: T
            do {
                value = try await body(connection)
            } catch {
                if !connection.isClosed {
                    do {
                        try await connection.queryUnlessClosed("ROLLBACK", logger: logger)
                    } catch {
                        try? await connection.close()
                    }
                }
                throw error
            }
            try await connection.queryUnlessClosed("COMMIT", logger: logger)
            return value
        }
    }
}
