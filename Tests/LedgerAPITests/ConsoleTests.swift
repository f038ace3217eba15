import Foundation
import LedgerAPI
import LedgerClient
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTestSupport
import LedgerTokens
import Testing

/// The auditor's console in a real browser: Debian's Chromium driven by Selenium
/// (Console/test_console.py) against a live ledger with data made here through the SDK.
/// Screenshots of every page go to .build/console-screenshots (not committed). The script fails
/// on any error in the browser's console, a favicon 404 included; only the API refusals it
/// provokes on purpose are allowed.
@Suite("Console")
struct ConsoleTests {
    static let xssTitle = #"<script>window.__xss=1</script><img src=x onerror="window.__xss=2">"#

    @Test(
        "its modules and icon served, sign in, a collaboration's timeline, history as sentences and members before a removal, the audit filtered and downloaded, the checkpoint's size, a title that is a script shown as text, another account seeing nothing, no browser console error"
    )
    func console() async throws {
        let python = try #require(ProcessRunner.which("python3"))
        for tool in ["chromium", "chromedriver"] {
            try #require(ProcessRunner.which(tool) != nil, "\(tool) is installed by scripts/setup-system.sh")
        }
        let root = Repository.root
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Console/test_console.py").path
        let downloads = FileManager.default.temporaryDirectory.appendingPathComponent("console-downloads-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: downloads) }
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let id = try await devin.prepareCollaboration(
                localIdentifier: "trip-plan.doc", title: "Trip plan", initiator: Initiator(handle: "devin@example.com", name: "Devin")
            ).identifier
            let (alice, bob) = (SimulatedPerson(collaborationId: id, devices: 2), SimulatedPerson(collaborationId: id, devices: 1))
            _ = try await devin.updateParticipants(added: [alice.rootHashData, bob.rootHashData], in: id)
            for (account, person, device) in [("alice", alice, 0), ("alice", alice, 1), ("bob", bob, 0)] {
                guard case .granted = try await verify(server.client(account), person, device: device, in: id) else {
                    Issue.record("\(account) was not granted")
                    return
                }
            }
            let beforeRemoval = Date()
            let removed = try await devin.updateParticipants(removed: [alice.rootHashData], in: id)
            let xss = try await devin.prepareCollaboration(
                localIdentifier: "xss.doc", title: Self.xssTitle, initiator: Initiator(handle: "devin@example.com"))
            _ = try await devin.members(of: id, minPosition: max(removed.position, xss.position))

            let environment = ProcessInfo.processInfo.environment.merging([
                "LEDGER_URL": server.baseURL.absoluteString,
                "OWNER_TOKEN": try await server.authority.issue(account: "devin"),
                "AUDITOR_TOKEN": try await server.authority.issue(account: "auditor", roles: ["auditor"]),
                "OTHER_TOKEN": try await server.authority.issue(account: "stranger"),
                "WINDOW_TOKEN": try await server.authority.issue(account: "erin"),
                "COLLABORATION_ID": id, "EXPECTED_GRANTS": "3", "EXPECTED_REVOCATIONS": "1", "REMOVED_ACCOUNT": "alice",
                "BEFORE_REMOVAL": APIJSON.time(beforeRemoval), "AUDIT_ACCOUNT": "bob",
                "XSS_COLLABORATION_ID": xss.identifier, "XSS_TITLE": Self.xssTitle,
                "SCREENSHOT_DIR": root.appendingPathComponent(".build/console-screenshots").path, "DOWNLOAD_DIR": downloads,
            ]) { $1 }
            let run = try await ProcessRunner.run(python, [script], environment: environment)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("ok - "), "\(run.output)")
        }
    }
}
