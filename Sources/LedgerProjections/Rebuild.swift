import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO
import Synchronization

/// Replays the whole log into fresh copies of a projection's tables (in the schema
/// `ledger_rebuild`) while the current ones keep serving, then swaps them in one transaction and
/// drops the old ones.
///
/// The copies are filled in bulk first: without their indexes, the log cut into chunks applied
/// on several connections at once (membership: only the access history, then the members
/// folded once from it, in parts, once the history's indexes are built); then the remaining
/// indexes are built, with the live tables' names. What the log gained meanwhile is applied the
/// ordinary way, chunk by chunk. The same projection functions write the copies: a rebuild's
/// connections put `ledger_rebuild` first on their search path. The swap transaction locks the
/// projection's row (the live worker's next batch waits), brings the copy up to the live
/// checkpoint, moves it into `public` in place of the live table, and clears a stop, so the
/// worker carries on from the same checkpoint, now on the rebuilt tables.
public struct ProjectionRebuild: Sendable {
    let client: PostgresClient
    let logger: Logger
    let chunk: Int64
    let connections: Int

    /// The schema the fresh copies are filled in.
    static let schema = "ledger_rebuild"

    /// `connections`: how many connections the bulk pass, the fold and the index builds use at once.
    public init(client: PostgresClient, logger: Logger, chunk: Int64 = 50_000, connections: Int = 2) {
        self.client = client
        self.logger = logger
        self.chunk = chunk
        self.connections = max(1, connections)
    }

    public struct Progress: Sendable {
        public var done: Int64
        public var total: Int64
        public var elapsed: Duration
    }

    public struct Report: Sendable {
        public var events: Int64
        public var elapsed: Duration
        public var position: Int64
    }

    /// An index of a live table, to build on its fresh copy under the same name.
    struct Index: Sendable {
        var table: String
        var name: String
        /// `CREATE [UNIQUE] INDEX name ON ledger_rebuild.table USING …`.
        var definition: String
        /// `PRIMARY KEY` or `UNIQUE` when a constraint owns the index.
        var constraint: String?
    }

    public func run(_ projection: Projection, progress: @escaping @Sendable (Progress) -> Void = { _ in }) async throws -> Report {
        let tables = try await tables(of: projection)
        let indexes = try await client.withConnection { connection in
            var indexes: [Index] = []
            for table in tables {
                try await connection.queryUnlessClosed(
                    PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \(Self.schema).\(table)"), logger: logger)
                try await connection.queryUnlessClosed(
                    PostgresQuery(unsafeSQL: "CREATE TABLE \(Self.schema).\(table) (LIKE public.\(table) INCLUDING ALL EXCLUDING INDEXES)"),
                    logger: logger)
                indexes += try await liveIndexes(of: table, on: connection)
            }
            return indexes
        }
        let started = ContinuousClock.now
        let report: @Sendable (Int64, Int64) -> Void = { done, total in
            progress(Progress(done: done, total: total, elapsed: ContinuousClock.now - started))
        }
        // Bulk, chasing the head until close to it.
        var done: Int64 = 0
        while true {
            let head = try await head()
            if head - done <= chunk / 10 { break }
            try await bulk(projection, from: done, to: head, report: report)
            done = head
        }
        // Membership's fold onto the members reads the history through its indexes; the members'
        // own indexes are built after it.
        try await restore(indexes.filter { $0.table != projection.foldedTable })
        let (bulkDone, parts) = (done, connections)
        try await inParallel(Array(0..<parts)) { part, connection in
            try await projection.finishBulk(to: bulkDone, part: part, parts: parts, on: connection, logger: logger)
        }
        try await restore(indexes.filter { $0.table == projection.foldedTable })
        // Statistics before the copies serve: freshly filled tables have none until autovacuum
        // gets to them, and plans made without them can be badly wrong (seen: a time-travel
        // query walking the whole history's primary key), while autovacuum's own ANALYZE of
        // a large table competes with the reads it serves.
        try await inParallel(tables) { table, connection in
            try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: "ANALYZE \(Self.schema).\(table)"), logger: logger)
        }
        // The ordinary way for what came meanwhile, then the swap.
        while true {
            let head = try await head()
            if head - done <= chunk / 10 { break }
            while done < head {
                let to = min(head, done + chunk)
                try await client.transaction(logger: logger) { connection in
                    try await Self.useCopies(connection, logger)
                    try await projection.apply(from: done, to: to, on: connection, logger: logger)
                }
                done = to
                report(done, head)
            }
        }
        let position = try await swap(projection, tables: tables, done: done)
        return Report(events: position, elapsed: ContinuousClock.now - started, position: position)
    }

    /// Points the transaction's unqualified table names at the fresh copies.
    static func useCopies(_ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: "SET LOCAL search_path = \(schema), public"), logger: logger)
    }

    /// Applies (from, to] in chunks on `connections` connections at once.
    private func bulk(_ projection: Projection, from: Int64, to: Int64, report: @escaping @Sendable (Int64, Int64) -> Void) async throws {
        let ranges = stride(from: from, to: to, by: Int(chunk)).map { ($0, min(to, $0 + chunk)) }
        let applied = Counter(from)
        try await inParallel(ranges) { range, connection in
            try await projection.applyBulk(from: range.0, to: range.1, on: connection, logger: logger)
            report(applied.add(range.1 - range.0), to)
        }
    }

    /// Runs `work` for every item, on up to `connections` connections at once, each in a
    /// transaction with room to sort and hash in memory. No parallel workers for index
    /// builds: the connections already build one index each at once, and on two cores the
    /// extra workers only competed (1M events: the indexes took 1.5 s with them, 0.9 s without).
    private func inParallel<Item: Sendable>(
        _ items: [Item], _ work: @escaping @Sendable (Item, PostgresConnection) async throws -> Void
    ) async throws {
        let next = Counter(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<min(connections, items.count) {
                group.addTask {
                    try await client.withConnection { connection in
                        while case let i = Int(next.add(1) - 1), i < items.count {
                            let item = items[i]
                            try await connection.queryUnlessClosed("BEGIN", logger: logger)
                            do {
                                try await connection.queryUnlessClosed("SET LOCAL work_mem = '128MB'", logger: logger)
                                try await connection.queryUnlessClosed("SET LOCAL maintenance_work_mem = '256MB'", logger: logger)
                                try await connection.queryUnlessClosed("SET LOCAL max_parallel_maintenance_workers = 0", logger: logger)
                                try await Self.useCopies(connection, logger)
                                try await work(item, connection)
                                try await connection.queryUnlessClosed("COMMIT", logger: logger)
                            } catch {
                                _ = try? await connection.queryUnlessClosed("ROLLBACK", logger: logger)
                                throw error
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// The live table's indexes, as definitions for its fresh copy (same names: they live in
    /// another schema until the swap).
    private func liveIndexes(of table: String, on connection: PostgresConnection) async throws -> [Index] {
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT ci.relname::text, pg_get_indexdef(i.indexrelid),
                   CASE c.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE' END
            FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid
            LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid
            WHERE i.indrelid = ('public.' || \(table))::regclass
            """, logger: logger)
        var indexes: [Index] = []
        for try await (name, definition, constraint) in rows.decode((String, String, String?).self) {
            try Self.checkName(name)
            // `CREATE [UNIQUE] INDEX name ON [public.]table USING …`: the same on the copy.
            guard let on = definition.range(of: " ON "),
                let using = definition.range(of: " USING ", range: on.upperBound..<definition.endIndex)
            else { throw StoreError.invalidRequest("unexpected index definition \(definition)") }
            let copy = definition[..<on.upperBound] + "\(Self.schema).\(table)" + definition[using.lowerBound...]
            indexes.append(Index(table: table, name: name, definition: String(copy), constraint: constraint))
        }
        return indexes
    }

    /// Builds the indexes (several at once), then gives constraints their index.
    private func restore(_ indexes: [Index]) async throws {
        try await inParallel(indexes) { index, connection in
            try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: index.definition), logger: logger)
        }
        try await client.withConnection { connection in
            for index in indexes {
                guard let constraint = index.constraint else { continue }
                try await connection.queryUnlessClosed(
                    PostgresQuery(
                        unsafeSQL:
                            "ALTER TABLE \(Self.schema).\(index.table) ADD CONSTRAINT \(index.name) \(constraint) USING INDEX \(index.name)"
                    ),
                    logger: logger)
            }
        }
    }

    /// Swaps the copies in under the projection's row lock, after applying what the live
    /// worker has applied beyond them; returns the position both stand at.
    private func swap(_ projection: Projection, tables: [String], done: Int64) async throws -> Int64 {
        return try await client.transaction(logger: logger) { connection in
            let rows = try await connection.queryUnlessClosed(
                "SELECT position FROM ledger_projections WHERE name = \(projection.rawValue) FOR UPDATE", logger: logger)
            var live: Int64 = 0
            for try await p in rows.decode(Int64.self) { live = p }
            let target = max(live, done)
            if target > done {
                try await Self.useCopies(connection, logger)
                try await projection.apply(from: done, to: target, on: connection, logger: logger)
                try await connection.queryUnlessClosed("SET LOCAL search_path = public", logger: logger)
            }
            for table in tables {
                try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: "DROP TABLE public.\(table)"), logger: logger)
                try await connection.queryUnlessClosed(
                    PostgresQuery(unsafeSQL: "ALTER TABLE \(Self.schema).\(table) SET SCHEMA public"), logger: logger)
            }
            try await connection.queryUnlessClosed(
                """
                UPDATE ledger_projections
                SET position = \(target), status = 'running', error = NULL, error_position = NULL, updated_at = now()
                WHERE name = \(projection.rawValue)
                """, logger: logger)
            return target
        }
    }

    private func head() async throws -> Int64 {
        try await client.queryUnlessClosed("SELECT position FROM ledger_head", logger: logger) { rows in
            for try await position in rows.decode(Int64.self) { return position }
            return 0
        }
    }

    private func tables(of projection: Projection) async throws -> [String] {
        try await client.queryUnlessClosed("SELECT ledger_projection_tables(\(projection.rawValue))", logger: logger) { rows in
            for try await tables in rows.decode([String].self) {
                // Table names come from the migration's fixed list; check them anyway before they go into DDL.
                try tables.forEach(Self.checkName)
                return tables
            }
            throw StoreError.invalidRequest("unknown projection \(projection.rawValue)")
        }
    }

    /// Names go into DDL: they come from the catalog and the migrations, checked anyway.
    static func checkName(_ name: String) throws {
        guard !name.isEmpty, name.allSatisfy({ ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "_" }) else {
            throw StoreError.invalidRequest("unexpected table or index name \(name)")
        }
    }

    /// A count shared by concurrent tasks.
    final class Counter: Sendable {
        private let value: Mutex<Int64>
        init(_ value: Int64) { self.value = Mutex(value) }
        /// Adds `n`; returns the new value.
        func add(_ n: Int64) -> Int64 {
            value.withLock {
                $0 += n
                return $0
            }
        }
    }
}
