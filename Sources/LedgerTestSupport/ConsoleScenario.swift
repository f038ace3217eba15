import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTokens
import LedgerWire

/// The console's browser test (`Tests/LedgerAPITests/Console/test_console.py`: Debian's Chromium
/// driven by Selenium) against a live ledger, one database's or one on shards, with its data made
/// here through the SDK: a collaboration whose owner added two people, three devices granted, one
/// person removed, and a collaboration whose title is a script.
public enum ConsoleScenario {
    public static let xssTitle = #"<script>window.__xss=1</script><img src=x onerror="window.__xss=2">"#

    /// Makes the data, then runs the script; its exit status and output. Screenshots go to
    /// `.build/console-screenshots` (`screenshots`, a folder name under it, for a second run).
    /// `logKey` is the log's verifier key the page's proof is checked against, `witnessKeys` the
    /// keys of the witnesses that cosign its checkpoints; on `shards` the proof goes through the
    /// top log, and the script checks that it names the shard.
    public static func run(
        baseURL: URL, authority: TokenAuthority, logKey: String, witnessKeys: [String] = [], shards: Bool = false,
        screenshots: String = "console-screenshots"
    ) async throws -> ProcessRunner.Output {
        guard let python = ProcessRunner.which("python3") else { throw ScenarioError("python3 is not installed") }
        for tool in ["chromium", "chromedriver"] where ProcessRunner.which(tool) == nil {
            throw ScenarioError("\(tool) is installed by scripts/setup-system.sh")
        }
        let client = { (account: String) in
            LedgerClient(baseURL: baseURL) { try await authority.issue(account: account) }
        }
        let downloads = FileManager.default.temporaryDirectory.appendingPathComponent("console-downloads-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: downloads) }
        let devin = client("devin")
        let id = try await devin.prepareCollaboration(
            localIdentifier: "trip-plan.doc", title: "Trip plan", initiator: Initiator(handle: "devin@example.com", name: "Devin")
        ).identifier
        let (alice, bob) = (SimulatedPerson(collaborationId: id, devices: 2), SimulatedPerson(collaborationId: id, devices: 1))
        _ = try await devin.updateParticipants(added: [alice.rootHashData, bob.rootHashData], in: id)
        for (account, person, device) in [("alice", alice, 0), ("alice", alice, 1), ("bob", bob, 0)] {
            guard case .granted = try await verify(client(account), person, device: device, in: id) else {
                throw ScenarioError("\(account) was not granted")
            }
        }
        let beforeRemoval = Date()
        let removed = try await devin.updateParticipants(removed: [alice.rootHashData], in: id)
        let xss = try await devin.prepareCollaboration(
            localIdentifier: "xss.doc", title: xssTitle, initiator: Initiator(handle: "devin@example.com"))
        // Both writes in the views before the browser looks (each collaboration's own position).
        _ = try await devin.members(of: id, minPosition: removed.position)
        _ = try await devin.members(of: xss.identifier, minPosition: xss.position)

        let environment = ProcessInfo.processInfo.environment.merging([
            "LEDGER_URL": baseURL.absoluteString,
            "OWNER_TOKEN": try await authority.issue(account: "devin"),
            "AUDITOR_TOKEN": try await authority.issue(account: "auditor", roles: ["auditor"]),
            "OTHER_TOKEN": try await authority.issue(account: "stranger"),
            "WINDOW_TOKEN": try await authority.issue(account: "erin"),
            "COLLABORATION_ID": id, "EXPECTED_GRANTS": "3", "EXPECTED_REVOCATIONS": "1", "REMOVED_ACCOUNT": "alice",
            "BEFORE_REMOVAL": APIJSON.time(beforeRemoval), "AUDIT_ACCOUNT": "bob",
            "XSS_COLLABORATION_ID": xss.identifier, "XSS_TITLE": xssTitle, "LOG_KEY": logKey, "SHARDS": shards ? "1" : "0",
            "WITNESS_KEYS": witnessKeys.joined(separator: "\n"),
            "SCREENSHOT_DIR": Repository.root.appendingPathComponent(".build/\(screenshots)").path, "DOWNLOAD_DIR": downloads,
        ]) { $1 }
        let script = Repository.root.appendingPathComponent("Tests/LedgerAPITests/Console/test_console.py").path
        return try await ProcessRunner.run(python, [script], environment: environment)
    }

    struct ScenarioError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
