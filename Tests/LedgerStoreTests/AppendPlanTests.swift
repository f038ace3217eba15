import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import PostgresNIO
import Testing

/// `ledger_append` keeps its plans for the session, but its two lookups are planned for their
/// arguments on every call (`ledger_append_lookup`): a generic plan cached while the log was small
/// would go on scanning it sequentially as it grows (0009 saw single appends fall from ~1,000/s to
/// ~190/s that way). Whether a generic plan is chosen, and kept, depends on when autovacuum
/// analyses and on the statistics then: a test that grew a log under a cached plan saw index scans
/// with and without the setting, so the settings are what is checked.
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
}
