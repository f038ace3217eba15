import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerTestSupport
import Testing
import TransparencyLog

/// The auditor's console in a real browser: Debian's Chromium driven by Selenium
/// (Console/test_console.py) against a live ledger with data made through the SDK
/// (`ConsoleScenario`). Screenshots of every page go to .build/console-screenshots (not
/// committed). The script fails on any error in the browser's console, a favicon 404 included;
/// only the API refusals it provokes on purpose are allowed.
@Suite("Console")
struct ConsoleTests {
    /// Its modules and icon served, sign in, a collaboration's timeline, history as sentences and
    /// members before a removal (proven in the page with the log's key, and refused when tampered
    /// with), the audit filtered and downloaded, the checkpoint's size, a title that is a script
    /// shown as text, another account seeing nothing, no browser console error.
    @Test("the console in a browser: sign-in, timeline, history, members, audit; no browser console error")
    func console() async throws {
        // The index on: the page proves the members from a lookup. A real witness cosigns every
        // checkpoint, and the page names it among the proof's cosigners given its key.
        let signer = try NoteSigner(name: "console.test/ledger")
        let witness = try TestWitness("w1.console.test", log: signer.verifier)
        try await witness.start()
        let policy = try WitnessPolicy("log \(signer.verifier.text)\n\(witness.policyLine("W1"))\nquorum W1\n")
        try await LiveServer.run(configuration: .testing { $0.index = true }, signer: signer, witnesses: policy) { server in
            let run = try await ConsoleScenario.run(
                baseURL: server.baseURL, authority: server.authority, logKey: signer.verifier.text,
                witnessKeys: [witness.cosigner.verifier.text])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("ok - "), "\(run.output)")
        }
        await witness.stop()
    }
}
