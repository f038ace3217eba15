import ArgumentParser
import Foundation
import LedgerClient
import LedgerWire

/// `ledger feed`: one account's change feed from a terminal or a script, through the SDK as an
/// app uses it (`LedgerClient.feed`, over URLSession): one JSON line per event, as the history
/// endpoint, the feed and webhooks show it (`History.Entry`, with its log position).
struct Feed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow an account's change feed over HTTP: one JSON line per event.",
        discussion: """
            After a dropped connection it reconnects from the last event printed, so nothing is \
            missed or repeated. It ends after --limit events, on Ctrl-C, or when the server refuses \
            the call (a 4xx, said on stderr: exit status 1).
            """)

    @Option(help: "The ledger's base URL, e.g. http://127.0.0.1:8080.") var url: String
    @Option(help: "A file holding the account's bearer token (e.g. from `ledger token --account A`).") var tokenFile: String
    @Option(help: "Start after this log position (0: from the first event the account may see); default: from now on.")
    var after: Int64?
    @Option(help: "Stop after this many events.") var limit: Int?

    func validate() throws {
        guard let base = URL(string: url), base.scheme == "http" || base.scheme == "https", base.host != nil else {
            throw ValidationError("--url must be an http or https URL, e.g. http://127.0.0.1:8080")
        }
        if let after, after < 0 { throw ValidationError("--after must be 0 or more") }
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
    }

    func run() async throws {
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw ValidationError("\(tokenFile) holds no token") }
        guard let base = URL(string: url) else { throw ValidationError("--url must be an http or https URL") }
        let client = LedgerClient(baseURL: base, token: token)
        let encoder = APIJSON.encoder()
        var printed = 0
        do {
            for try await event in client.feed(after: after) {
                let line = try encoder.encode(event.entry) + Data("\n".utf8)
                // Written at once, not buffered: a script reading the pipe sees each event as it
                // comes; once the reader is gone (`ledger feed | head -1`), it ends quietly.
                do { try FileHandle.standardOutput.write(contentsOf: line) } catch { return }
                printed += 1
                if let limit, printed >= limit { break }
            }
        } catch let refused as LedgerError {
            FileHandle.standardError.write(Data("ledger feed: \(refused)\n".utf8))
            throw ExitCode.failure
        }
    }
}
