import ArgumentParser
import Foundation
import LedgerPostgres
import Logging
import PostgresNIO

/// What the servers asked of the shards' PostgreSQL during a phase, statement by statement
/// (`pg_stat_statements`, loaded into each shard's cluster at its start): which statements a
/// command costs more of on N shards than on one is where N servers on N shards pay for each
/// other (every server follows every shard). `ledger-bench commands --statements` reads one
/// cluster's the same way, to take a command apart.
enum ShardStatements {
    /// The clusters' extra server settings: the module loaded, top-level statements counted.
    static let serverSettings = ["shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.max": "2000"]

    /// The extension in the cluster's maintenance database (`postgres`), where it is read from;
    /// refused at once when the server does not preload the module (it would count nothing).
    static func install(_ cluster: DatabaseSettings, logger: Logger) async throws {
        try await PostgresAdmin.withConnection(cluster.with(database: "postgres"), logger: logger) { connection in
            let rows = try await connection.query("SELECT current_setting('shared_preload_libraries')", logger: logger)
            for try await preloaded in rows.decode(String.self) where !preloaded.contains("pg_stat_statements") {
                throw ValidationError(
                    "\(cluster.host):\(cluster.port) does not preload pg_stat_statements: start it with shared_preload_libraries=pg_stat_statements"
                )
            }
            _ = try await connection.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", logger: logger)
        }
    }

    /// Forgets what every cluster counted so far.
    static func reset(_ shards: [DatabaseSettings], logger: Logger) async throws {
        for shard in shards {
            try await PostgresAdmin.withConnection(shard.with(database: "postgres"), logger: logger) {
                _ = try await $0.query("SELECT pg_stat_statements_reset()", logger: logger)
            }
        }
    }

    /// Each statement's calls since the last reset in the shards' databases, summed over shards,
    /// keyed by its normalised text on one line.
    static func calls(_ shards: [DatabaseSettings], logger: Logger) async throws -> [String: Double] {
        try await costs(shards, logger: logger).mapValues(\.calls)
    }

    /// Each statement's calls and execution time in milliseconds since the last reset, summed
    /// over shards, keyed by its normalised text on one line.
    static func costs(_ shards: [DatabaseSettings], logger: Logger) async throws -> [String: (calls: Double, milliseconds: Double)] {
        var costs: [String: (calls: Double, milliseconds: Double)] = [:]
        for shard in shards {
            try await PostgresAdmin.withConnection(shard.with(database: "postgres"), logger: logger) { connection in
                let rows = try await connection.query(
                    """
                    SELECT s.query, s.calls, s.total_exec_time FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                    WHERE d.datname = \(shard.database)
                    """, logger: logger)
                for try await (query, count, time) in rows.decode((String, Int64, Double).self) {
                    let line = oneLine(query)
                    let sum = costs[line] ?? (0, 0)
                    costs[line] = (sum.calls + Double(count), sum.milliseconds + time)
                }
            }
        }
        return costs
    }

    /// The statement's text with its whitespace runs as one space.
    static func oneLine(_ query: String) -> String {
        query.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
