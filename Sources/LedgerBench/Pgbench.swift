import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerPostgres
import PostgresNIO

/// The baseline every write figure is a ratio to: pgbench's single-row inserts into a table
/// shaped like the event log (`bench_insert`), on the same cluster, in the same run.
enum Pgbench {
    static func createTable(_ client: PostgresClient) async throws {
        try await client.query(
            """
            CREATE TABLE IF NOT EXISTS bench_insert (
                position bigserial PRIMARY KEY, stream_id text NOT NULL, version bigint NOT NULL,
                event_id uuid NOT NULL UNIQUE, event_type text NOT NULL, data json NOT NULL,
                metadata json NOT NULL, recorded_at timestamptz NOT NULL, hash bytea NOT NULL,
                UNIQUE (stream_id, version))
            """)
    }

    /// The tables of `Script.logFloor`: copies of the log's own (`ledger_events`,
    /// `ledger_streams`: their columns, constraints and indexes, not their triggers) and a head row.
    static func createLogFloorTables(_ client: PostgresClient) async throws {
        try await client.query("CREATE TABLE IF NOT EXISTS bench_log (LIKE ledger_events INCLUDING ALL)")
        try await client.query("CREATE TABLE IF NOT EXISTS bench_log_streams (LIKE ledger_streams INCLUDING ALL)")
        try await client.query("CREATE TABLE IF NOT EXISTS bench_log_head (LIKE ledger_head INCLUDING ALL)")
        try await client.query("INSERT INTO bench_log_head SELECT true, 0, sha256('') WHERE NOT EXISTS (SELECT 1 FROM bench_log_head)")
    }

    /// `Script.logFloor` at 1 client, its head row vacuumed first. One client, as the ledger's
    /// appends reach the head one group at a time (`GroupQueue`): pgbench's clients waiting on
    /// the head row hold back its pruning, and the row's dead versions slow every later run
    /// tenfold.
    static func logFloorRate(_ pgbench: String, _ settings: DatabaseSettings, _ client: PostgresClient, seconds: Double) async throws
        -> Double
    {
        try await client.query("VACUUM bench_log_head")
        return try await rate(pgbench, settings, clients: 1, seconds: seconds, script: .logFloor)
    }

    /// What a pgbench transaction does.
    enum Script {
        /// One single-row insert into `bench_insert`.
        case insert
        /// A read of the client's pseudonym (`ledger_subject`), then the insert: a command's shape.
        case readInsert
        /// The least a hash-chained log's append can do, in one statement: lock the head, insert
        /// the event chained to it, create its stream's row, move the head (`createLogFloorTables`).
        /// No version check, dedupe, state, notify or plpgsql: what the log's contract costs
        /// before any of ours. Run it through `logFloorRate`.
        case logFloor
    }

    /// Transactions per second (tps excluding connection time) of `script`.
    static func rate(_ pgbench: String, _ settings: DatabaseSettings, clients: Int, seconds: Double, script: Script = .insert)
        async throws -> Double
    {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-pgbench-\(UUID().uuidString).sql")
        let (data, metadata) = (#"'{"rootHash":"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=","kind":"bench"}'"#, #"'{"actor":"bench"}'"#)
        let insert = """
            INSERT INTO bench_insert (stream_id, version, event_id, event_type, data, metadata, recorded_at, hash) \
            VALUES ('pgbench-' || :client_id || '-' || random(), 1, gen_random_uuid(), 'BenchEvent', \(data), \(metadata), now(), sha256('x'));
            """
        let text =
            switch script {
            case .insert: insert
            case .readInsert: "SELECT ledger_subject('pgbench-' || :client_id);\n" + insert
            case .logFloor:
                """
                WITH h AS (SELECT position, hash FROM bench_log_head FOR UPDATE), \
                e AS (INSERT INTO bench_log (position, stream_id, version, event_id, event_type, data, metadata, recorded_at, hash) \
                SELECT h.position + 1, 'pgbench-' || :client_id || '-' || random(), 1, gen_random_uuid(), 'BenchEvent', \(data), \(metadata), now(), \
                sha256(h.hash || sha256('x')) FROM h RETURNING position, hash, stream_id), \
                s AS (INSERT INTO bench_log_streams (stream_id, version, position) SELECT stream_id, 1, position FROM e) \
                UPDATE bench_log_head SET position = e.position, hash = e.hash FROM e;
                """
            }
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        var env = ProcessInfo.processInfo.environment
        env["PGPASSWORD"] = settings.password ?? ""
        let output = try await ProcessRunner.check(
            pgbench,
            [
                "-n", "-f", file.path, "-c", "\(clients)", "-j", "\(min(clients, 2))", "-T", "\(Int(seconds.rounded(.up)))",
                "-h", settings.host, "-p", "\(settings.port)", "-U", settings.username, settings.database,
            ],
            environment: env)
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let value = Double(line.dropFirst(6).prefix(while: { $0 != " " }))
        else { throw ValidationError("could not read pgbench output:\n\(output)") }
        return value
    }

    /// pgbench beside the cluster's binaries, or on PATH.
    static func path() throws -> String {
        if let bin = try? EmbeddedPostgres.binaries(preferring: Setting.pgBin.value()),
            FileManager.default.isExecutableFile(atPath: bin + "/pgbench")
        {
            return bin + "/pgbench"
        }
        guard let found = ProcessRunner.which("pgbench") else {
            throw ValidationError("pgbench not found (Debian: apt-get install postgresql-client)")
        }
        return found
    }
}
