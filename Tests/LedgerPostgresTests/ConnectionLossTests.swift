import Foundation
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// Connections the server ends under a transaction or between queries: the ledger's queries
/// and transactions fail at once instead of waiting for ever (PostgresNIO 1.33's own
/// `query` and `withTransaction` never answer there; see `queryUnlessClosed`).
@Suite("Connection loss")
struct ConnectionLossTests {
    let logger = Logger(label: "test")

    static func backend(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int32 {
        let rows = try await connection.queryUnlessClosed("SELECT pg_backend_pid()", logger: logger)
        for try await pid in rows.decode(Int32.self) { return pid }
        throw CancellationError()
    }

    /// Ends `pid`'s session from another connection and waits until the client sees it closed.
    static func terminate(_ pid: Int32, _ connection: PostgresConnection, via client: PostgresClient) async throws {
        try await client.query("SELECT pg_terminate_backend(\(pid))")
        try await waitUntil(timeout: .seconds(30), "the client sees the connection closed") { connection.isClosed }
    }

    @Test("a query on a connection the server ended fails with ConnectionClosed, in a transaction or not")
    func queryAfterTermination() async throws {
        try await withTestStore { _, client, _ in
            for inTransaction in [false, true] {
                let outcome: Result<Void, any Error> = try await withDeadline(.seconds(60), "a query on an ended connection") {
                    try await client.withConnection { connection in
                        if inTransaction { try await connection.queryUnlessClosed("BEGIN", logger: logger) }
                        try await Self.terminate(try await Self.backend(connection, logger), connection, via: client)
                        do {
                            try await connection.queryUnlessClosed("SELECT 1", logger: logger)
                            return .success(())
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                guard case .failure(let error) = outcome else {
                    Issue.record("a query on an ended connection succeeded")
                    continue
                }
                #expect(error is ConnectionClosed, "in a transaction: \(inTransaction): \(error)")
            }
            try await client.query("SELECT 1")  // the pool goes on with other connections
        }
    }

    @Test("a transaction whose session the server ends for idling fails at once, with nothing committed")
    func idleTransactionEnded() async throws {
        try await withTestStore { _, client, _ in
            try await client.query("CREATE TABLE loss_probe (n int)")
            let started = ContinuousClock.now
            await #expect(throws: ConnectionClosed.self) {
                try await withDeadline(.seconds(60), "a transaction ended by the server") {
                    try await client.transaction(logger: logger) { connection in
                        // The limit is set by the statement that writes, so the session can only be
                        // ended after the write, however slow the machine is between statements.
                        try await connection.queryUnlessClosed(
                            """
                            WITH written AS (INSERT INTO loss_probe VALUES (1) RETURNING n)
                            SELECT set_config('idle_in_transaction_session_timeout', '200ms', true) FROM written
                            """, logger: logger)
                        // The client goes quiet inside the transaction; the server ends the session.
                        try await waitUntil(timeout: .seconds(30), "the server ends the idle session") { connection.isClosed }
                        try await connection.queryUnlessClosed("INSERT INTO loss_probe VALUES (2)", logger: logger)
                    }
                }
            }
            #expect(ContinuousClock.now - started < .seconds(30), "ended promptly, not at the deadline")
            let rows = try await client.query("SELECT count(*) FROM loss_probe")
            for try await n in rows.decode(Int64.self) { #expect(n == 0) }
        }
    }

    @Test("a transaction body cut by a lost connection throws; no ROLLBACK waits on the dead connection")
    func bodyCutByLoss() async throws {
        try await withTestStore { _, client, _ in
            struct Marker: Error {}
            await #expect(throws: Marker.self) {
                try await withDeadline(.seconds(60), "a transaction on a lost connection") {
                    try await client.transaction(logger: logger) { connection in
                        try await Self.terminate(try await Self.backend(connection, logger), connection, via: client)
                        throw Marker()
                    }
                }
            }
        }
    }
}
