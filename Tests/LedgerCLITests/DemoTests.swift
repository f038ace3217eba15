import Foundation
import LedgerPostgres
import LedgerTestSupport
import Testing

/// `ledger demo`, the life cycle a newcomer plays first, against a running ledger on one database.
@Suite("The demo")
struct DemoTests {
    @Test("ledger demo --url: every step, bob's evidence verified before and after his erasure")
    func demo() async throws {
        try await LiveServer.run { server in
            let run = try await ledgerDemo(against: server.baseURL, secret: server.secret)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.components(separatedBy: "device proof verified: true").count == 3, "\(run.output)")
            #expect(run.output.contains("mallory: refused"), "\(run.output)")
            #expect(run.output.contains("asked again: held false"), "\(run.output)")
        }
    }
}
