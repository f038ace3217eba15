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

    /// Single-row insert transactions per second (tps excluding connection time); with `read`,
    /// each insert follows a read of the client's pseudonym (`ledger_subject`), the shape of a
    /// command.
    static func rate(_ pgbench: String, _ settings: DatabaseSettings, clients: Int, seconds: Double, read: Bool = false) async throws
        -> Double
    {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-pgbench-\(UUID().uuidString).sql")
        try """
        \(read ? "SELECT ledger_subject('pgbench-' || :client_id);\n" : "")INSERT INTO bench_insert (stream_id, version, event_id, event_type, data, metadata, recorded_at, hash) VALUES ('pgbench-' || :client_id || '-' || random(), 1, gen_random_uuid(), 'BenchEvent', '{"rootHash":"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=","kind":"bench"}', '{"actor":"bench"}', now(), sha256('x'));
        """.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        var env = ProcessInfo.processInfo.environment
        env["PGPASSWORD"] = settings.password ?? ""
        let output = try await ProcessRunner.check(
            pgbench,
            [
                "-n", "-f", script.path, "-c", "\(clients)", "-j", "\(min(clients, 2))", "-T", "\(Int(seconds.rounded(.up)))",
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
