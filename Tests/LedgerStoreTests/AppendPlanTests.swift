import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import PostgresNIO
import Testing

/// `ledger_append` plans its statements for their arguments on every call (force_custom_plan):
/// a generic plan cached while the log was small would go on scanning it sequentially as it grows
/// (0009 saw single appends fall from ~1,000/s to ~190/s that way). Keeping the cached plans and
/// re-planning only its two lookups made single appends faster but commands slower (issue 47,
/// docs/BENCHMARKS.md), so the setting stays on the whole function.
struct AppendPlanTests {
    @Test("ledger_append is planned on every call (force_custom_plan) and runs on its own schema")
    func planMode() async throws {
        try await withTestStore { _, client, _ in
            var config: [String]?
            for try await settings in try await client.query(
                "SELECT coalesce(proconfig, '{}') FROM pg_proc WHERE proname = 'ledger_append'"
            ).decode([String].self) {
                config = settings
            }
            let settings = try #require(config)
            #expect(settings.contains("plan_cache_mode=force_custom_plan"), "\(settings)")
            #expect(settings.contains { $0.hasPrefix("search_path=") }, "a SECURITY DEFINER function runs on its own schema")
        }
    }
}
