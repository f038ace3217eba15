import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// `ledger_append` keeps its plans for the session, but its two lookups are planned for their
/// arguments on every call (`ledger_append_lookup`): a generic plan cached while the log was small
/// would go on scanning it sequentially as it grows (0009 saw single appends fall from ~1,000/s to
/// ~190/s that way; it depends on when autovacuum analyses, so the settings are what is checked).
struct AppendPlanTests {
    @Test("the lookups are planned on every call (force_custom_plan), ledger_append's own statements are not")
    func planModes() async throws {
        try await withTestStore { _, client, _ in
            var settings: [String: [String]] = [:]
            for try await (name, config) in try await client.query(
                "SELECT proname::text, coalesce(proconfig, '{}') FROM pg_proc WHERE proname IN ('ledger_append', 'ledger_append_lookup')"
            ).decode((String, [String]).self) {
                settings[name] = config
            }
            #expect(settings["ledger_append_lookup"]?.contains("plan_cache_mode=force_custom_plan") == true)
            let append = try #require(settings["ledger_append"])
            #expect(!append.contains { $0.hasPrefix("plan_cache_mode") }, "ledger_append re-plans every statement: \(append)")
            #expect(append.contains { $0.hasPrefix("search_path=") }, "a SECURITY DEFINER function runs on its own schema")
        }
    }

    @Test("a session's appends after its plans were cached on a small, analysed log still look streams and event ids up by index")
    func lookupsUseIndexesAfterGrowth() async throws {
        try await withTestStore { store, client, _ in
            try await client.withConnection { connection in
                // A small log with statistics, as an early autovacuum ANALYZE leaves it, then plans
                // made and cached on it (a generic plan is chosen after five calls).
                for n in 0..<100 { try await Self.appendOne(on: connection, stream: "early-\(n)") }
                try await connection.query("ANALYZE ledger_events, ledger_streams", logger: Logger(label: "test"))
                for n in 100..<110 { try await Self.appendOne(on: connection, stream: "early-\(n)") }
                // The log grows past what a sequential scan should ever read: 2,000 streams of 10 events.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in 0..<2_000 {
                        group.addTask {
                            _ = try await store.append(
                                .init(streamId: "grown-\(n)", expectedVersion: .noStream, events: (0..<10).map { event("Grown", $0) }))
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await count(client) == 20_110)
                // Counted in one transaction, before and after: the backend's counts not yet
                // flushed to the shared statistics include earlier transactions' scans.
                try await connection.query("BEGIN", logger: Logger(label: "test"))
                let before = try await Self.scans(on: connection)
                try await Self.appendOne(on: connection, stream: "grown-7")
                try await Self.appendOne(on: connection, stream: "late")
                let after = try await Self.scans(on: connection)
                try await connection.query("COMMIT", logger: Logger(label: "test"))
                for table in ["ledger_events", "ledger_streams"] {
                    let (sequential, indexed) = try #require(after[table]), (sequential0, indexed0) = before[table] ?? (0, 0)
                    #expect(sequential - sequential0 == 0, "\(table) scanned sequentially \(sequential - sequential0) times")
                    #expect(indexed - indexed0 > 0, "\(table) not looked up by index")
                }
            }
        }
    }

    /// Sequential and index scans of the log's tables counted by this backend, not yet flushed.
    static func scans(on connection: PostgresConnection) async throws -> [String: (Int64, Int64)] {
        var scans: [String: (Int64, Int64)] = [:]
        for try await (table, sequential, indexed) in try await connection.query(
            "SELECT relname::text, seq_scan, coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables WHERE relname IN ('ledger_events', 'ledger_streams')",
            logger: Logger(label: "test")
        ).decode((String, Int64, Int64).self) {
            scans[table] = (sequential, indexed)
        }
        return scans
    }

    /// One event on `stream` through `ledger_append` itself, on this connection.
    static func appendOne(on connection: PostgresConnection, stream: String) async throws {
        let rows = try await connection.query(
            """
            SELECT outcome FROM ledger_append(ARRAY[\(stream)], ARRAY[-1::int8], ARRAY[''], ARRAY[1], ARRAY[\(UUID())],
                ARRAY['Tested'], ARRAY['{"n":0}'], ARRAY['{}'])
            """, logger: Logger(label: "test"))
        for try await outcome in rows.decode(String.self) { #expect(outcome == "ok") }
    }
}
