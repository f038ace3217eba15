import LedgerIndex
import LedgerIndexStore
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// The services' login folds the index and may do nothing else to its tables; a reader's
/// snapshot writes nothing.
@Suite("Index store privileges")
struct IndexPrivilegeTests {
    static let logger = Logger(label: "index-privilege-test")

    @Test("the services' login folds the index but cannot delete, truncate or add a state")
    func leastPrivilege() async throws {
        try await withTestStore { store, _, settings in
            var events = SimulatedEvents(seed: 21)
            try await events.append(300, to: store)
            let service = try await PostgresAdmin.serviceLogin(
                "ledger_index_\(UInt32.random(in: 0 ... .max))", on: settings, logger: Self.logger)
            try await withClient(service) { app in
                let (outcome, batches) = try await IndexFolder(client: app, logger: Self.logger, batchSize: 100).catchUp()
                #expect(batches >= 3)
                let head = try await EventStore(client: app, logger: Self.logger).head().position
                guard case .upToDate(let state) = outcome else { throw IndexStoreError("not caught up: \(outcome)") }
                #expect(state.logSize == head)
                for statement: PostgresQuery in [
                    "DELETE FROM ledger_index_nodes", "TRUNCATE ledger_index_nodes", "DELETE FROM ledger_index_state",
                    "TRUNCATE ledger_index_state",
                    "INSERT INTO ledger_index_state (only_row, log_size, root) SELECT false, log_size, root FROM ledger_index_state",
                    "ALTER TABLE ledger_index_nodes DISABLE TRIGGER ALL", "DROP TABLE ledger_index_nodes",
                    "DELETE FROM ledger_index_postings", "UPDATE ledger_index_postings SET position = position + 1",
                    "TRUNCATE ledger_index_postings",
                ] {
                    // insufficient_privilege: refused for want of a right, not for a bad statement.
                    let error = await #expect(throws: PSQLError.self, "\(statement.sql)") { try await app.query(statement) }
                    #expect(error?.serverInfo?[.sqlState] == "42501", "\(statement.sql): \(String(reflecting: error))")
                }
                #expect(try await IndexReader(client: app, logger: Self.logger).state() == state)
            }
        }
    }

    @Test("a reader's snapshot cannot write: an update inside it fails and changes nothing")
    func readerWritesNothing() async throws {
        try await withTestStore { store, client, _ in
            var events = SimulatedEvents(seed: 22)
            try await events.append(100, to: store)
            _ = try await IndexFolder(client: client, logger: Self.logger).catchUp()
            let reader = IndexReader(client: client, logger: Self.logger)
            let before = try await reader.state()
            #expect(before.logSize > 0)
            let key = IndexKey.collaboration("written-in-a-snapshot").hash
            // A reader's store writes nothing, and its snapshot is read-only besides.
            await #expect(throws: IndexStoreError.self) {
                try await reader.read { _, tree in try await tree.update([key]) { _, _ in .zero } }
            }
            let error = await #expect(throws: PSQLError.self) {
                try await client.transaction(logger: Self.logger) { connection in
                    try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: Self.logger)
                    try await connection.query("UPDATE ledger_index_state SET kept_size = kept_size", logger: Self.logger)
                }
            }
            // read_only_sql_transaction
            #expect(error?.serverInfo?[.sqlState] == "25006", "\(String(reflecting: error))")
            let (state, root, value) = try await reader.read { state, tree in (state, try await tree.root(), try await tree.value(of: key))
            }
            #expect(state == before)
            #expect(root == before.root)
            #expect(value == nil)
        }
    }
}
