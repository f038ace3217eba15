import Foundation
import LedgerClient
import LedgerPostgres
import LedgerTestSupport
import LedgerTokens
import LedgerWire
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ledger feed`: the SDK's change feed over its default transport (URLSession), in a process of
/// its own, as an app runs it. URLSession never runs in the test process (it once wedged it).
@Suite("ledger feed")
struct FeedCommandTests {
    /// `ledger feed` with `arguments`, within `limit`: its exit status, stdout and stderr. Killed
    /// (and recorded) if it has not ended by then.
    static func feed(_ arguments: [String], within limit: Duration = .seconds(60)) async throws -> (
        status: Int32, out: String, err: String
    ) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (out, err) = (folder.appendingPathComponent("out").path, folder.appendingPathComponent("err").path)
        let pid = try ProcessRunner.launch(
            ledgerBinary(), ["feed"] + arguments, environment: ConfigurationTests.environment([:]), outputPath: out, errorPath: err)
        let status: Int32
        do {
            status = try await withDeadline(limit, "ledger feed") { await ProcessRunner.exit(of: pid) }
        } catch {
            kill(pid, SIGKILL)
            Issue.record(
                "ledger feed did not end within \(limit): \(String(describing: try? String(contentsOfFile: err, encoding: .utf8)))")
            throw error
        }
        return (status, try String(contentsOfFile: out, encoding: .utf8), try String(contentsOfFile: err, encoding: .utf8))
    }

    static func entries(_ out: String) throws -> [History.Entry] {
        try out.split(separator: "\n").map { try APIJSON.decoder().decode(History.Entry.self, from: Data($0.utf8)) }
    }

    static func tokenFile(_ token: String) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString.prefix(8))")
        try token.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test("from a position: the account's events in order, a JSON line each, then live ones; --limit ends it")
    func follows() async throws {
        try await LiveServer.run { server in
            let alice = server.client("alice")
            let started = try await alice.prepareCollaboration(
                localIdentifier: "feed", title: "Feed", initiator: Initiator(handle: "alice@example.com"))
            let notice = try await alice.postHighlight(.change, trigger: "edit", in: started.identifier)
            let token = try Self.tokenFile(try await server.authority.issue(account: "alice"))
            defer { try? FileManager.default.removeItem(atPath: token) }
            let url = server.baseURL.absoluteString

            let past = try await Self.feed(["--url", url, "--token-file", token, "--after", "0", "--limit", "2"])
            #expect(past.status == 0, "\(past.err)")
            let entries = try Self.entries(past.out)
            #expect(entries.map(\.position) == [started.position, notice])
            #expect(entries.map(\.type) == ["CollaborationStarted", "HighlightPosted"])
            #expect(entries.allSatisfy { $0.collaborationId == started.identifier })

            // Live: from the last event on. The next one is appended while it runs (or before it
            // connects: it asks from `notice` on, so it is not missed either way).
            async let live = Self.feed(["--url", url, "--token-file", token, "--after", String(notice), "--limit", "1"])
            let next = try await alice.postHighlight(.change, trigger: "comment", in: started.identifier)
            let followed = try await live
            #expect(followed.status == 0, "\(followed.err)")
            #expect(try Self.entries(followed.out).map(\.position) == [next])
        }
    }

    @Test("a refused token: 401 on stderr, exit 1, nothing on stdout; a bad URL or number refused before a call")
    func refused() async throws {
        try await LiveServer.run { server in
            let token = try Self.tokenFile("not-a-token")
            defer { try? FileManager.default.removeItem(atPath: token) }
            let url = server.baseURL.absoluteString
            let refused = try await Self.feed(["--url", url, "--token-file", token, "--after", "0"])
            #expect(refused.status == 1)
            #expect(refused.out.isEmpty)
            #expect(refused.err.contains("401"), "\(refused.err)")
            for bad in [
                ["--url", "ftp://127.0.0.1/", "--token-file", token], ["--url", url, "--token-file", token, "--after=-1"],
                ["--url", url, "--token-file", token, "--limit", "0"],
            ] {
                let invalid = try await Self.feed(bad)
                #expect(invalid.status != 0 && invalid.out.isEmpty, "\(bad)")
                #expect(invalid.err.contains("must be"), "\(bad): \(invalid.err)")
            }
        }
    }
}
