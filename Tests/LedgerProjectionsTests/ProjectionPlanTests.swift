import LedgerTestSupport
import PostgresNIO
import Testing

@testable import LedgerProjections

/// The projection steps that read a position range of the log are planned for that range on every
/// call (force_custom_plan). A projector's session otherwise kept a generic plan made from the
/// statistics of a small log, which read the range through the (stream_id, version) index: every
/// collaboration event of the log, filtered by position, at each step (3-5 ms a step at 130k
/// events, growing with the log; issue 47, docs/BENCHMARKS.md).
struct ProjectionPlanTests {
    static let rangeReaders = ["ledger_project_collaborations", "ledger_project_highlights", "ledger_project_access_history"]

    @Test("projection steps reading a range of the log are planned for it on every call (force_custom_plan)")
    func planMode() async throws {
        try await withTestStore { _, client, _ in
            var settings: [String: [String]] = [:]
            for try await (name, config) in try await client.query(
                "SELECT proname::text, coalesce(proconfig, '{}') FROM pg_proc WHERE proname = ANY(\(Self.rangeReaders))"
            ).decode((String, [String]).self) {
                settings[name] = config
            }
            #expect(Set(settings.keys) == Set(Self.rangeReaders))
            for (name, config) in settings {
                #expect(config.contains("plan_cache_mode=force_custom_plan"), "\(name): \(config)")
            }
        }
    }

    @Test("a step reads its range by the log's primary key, never the stream index, even with no statistics")
    func rangeThroughPrimaryKey() async throws {
        try await withTestStore { store, client, _ in
            try await writeCollaborations(store, count: 40, seed: 47)
            try await client.withConnection { connection in
                let head = try await connection.query("SELECT position FROM ledger_head", logger: logger).collect().first!.decode(
                    Int64.self)
                try await connection.query("SET stats_fetch_consistency = none", logger: logger)
                // Scans counted by index, as flushed when the session is next idle (forced).
                func scans() async throws -> [String: Int64] {
                    try await connection.query("SELECT pg_stat_force_next_flush()", logger: logger)
                    var scans: [String: Int64] = [:]
                    for try await (name, count) in try await connection.query(
                        "SELECT indexrelname::text, idx_scan FROM pg_stat_user_indexes WHERE relname = 'ledger_events'", logger: logger
                    ).decode((String, Int64).self) {
                        scans[name] = count
                    }
                    return scans
                }
                let before = try await scans()
                // More calls than a session plans before it may keep a generic plan (five).
                for step in 0..<8 {
                    let to = head - Int64(step) * 3
                    try await connection.query("BEGIN", logger: logger)
                    for reader in Self.rangeReaders {
                        try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(reader)(\(to - 3), \(to))"), logger: logger)
                    }
                    try await connection.query("ROLLBACK", logger: logger)
                }
                let after = try await scans()
                #expect(
                    after["ledger_events_stream_id_version_key"] == before["ledger_events_stream_id_version_key"], "\(before) → \(after)")
                #expect(
                    (after["ledger_events_pkey"] ?? 0) - (before["ledger_events_pkey"] ?? 0) >= Int64(8 * Self.rangeReaders.count),
                    "\(before) → \(after)")
            }
        }
    }
}
