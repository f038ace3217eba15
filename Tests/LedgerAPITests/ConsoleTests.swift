import Foundation
import LedgerPostgres
import LedgerTestSupport
import Testing

/// The auditor's console in a real browser: Debian's Chromium driven by Selenium
/// (Console/test_console.py) against a live ledger with data made through the SDK
/// (`ConsoleScenario`). Screenshots of every page go to .build/console-screenshots (not
/// committed). The script fails on any error in the browser's console, a favicon 404 included;
/// only the API refusals it provokes on purpose are allowed.
@Suite("Console")
struct ConsoleTests {
    /// Its modules and icon served, sign in, a collaboration's timeline, history as sentences and
    /// members before a removal, the audit filtered and downloaded, the checkpoint's size, a title
    /// that is a script shown as text, another account seeing nothing, no browser console error.
    @Test("the console in a browser: sign-in, timeline, history, members, audit; no browser console error")
    func console() async throws {
        try await LiveServer.run { server in
            let run = try await ConsoleScenario.run(baseURL: server.baseURL, authority: server.authority)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("ok - "), "\(run.output)")
        }
    }
}
