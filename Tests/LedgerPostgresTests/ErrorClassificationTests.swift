import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import PostgresNIO
import Testing

@Suite("Database error classification")
struct ErrorClassificationTests {
    /// The error PostgreSQL raises for `sqlState`.
    func raised(_ sqlState: String, on client: PostgresClient) async throws -> PSQLError {
        do {
            try await client.query(PostgresQuery(unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'test' USING ERRCODE = '\(sqlState)'; END $$"))
        } catch let error as PSQLError {
            return error
        }
        Issue.record("no error raised for \(sqlState)")
        throw CancellationError()
    }

    @Test("data errors stop a projection; shutdowns, lost connections, recovery, deadlocks and timeouts pass")
    func classification() async throws {
        try await withTestStore { _, client, _ in
            // (SQLSTATE, a data error?, the database unavailable?)
            let cases: [(String, Bool, Bool)] = [
                ("22023", true, false),  // invalid_parameter_value: a fold refusing an event
                ("23505", true, false),  // unique_violation
                ("P0001", true, false),  // raise_exception from PL/pgSQL
                ("40001", false, false),  // serialization_failure
                ("40P01", false, false),  // deadlock_detected
                ("55P03", false, false),  // lock_not_available
                ("57014", false, false),  // query_canceled
                ("57P01", false, true),  // admin_shutdown
                ("57P02", false, true),  // crash_shutdown
                ("57P03", false, true),  // cannot_connect_now (recovering)
                ("08006", false, true),  // connection_failure
                ("25006", false, true),  // read_only_sql_transaction: a write on a server in recovery (a failover)
                ("53300", false, false),  // too_many_connections
            ]
            for (state, data, unavailable) in cases {
                let error = try await raised(state, on: client)
                #expect(error.serverInfo?[.sqlState] == state)
                #expect(error.isDataError == data, "\(state)")
                #expect(error.meansDatabaseUnavailable == unavailable, "\(state)")
            }
        }
    }
}
