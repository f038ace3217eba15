import Foundation
import LedgerDomain
import LedgerConfiguration
import LedgerTestSupport
import LedgerAPI
import LedgerWire
import Testing

@Suite("Audit export")
struct AuditExportTests {
    @Test("CSV cells that a spreadsheet would run as a formula (=, +, -, @, tab, CR first) begin with ', the others are as they were")
    func csvInjection() {
        let values = ["=SUM(1+1)", "+1", "-2", "@SUM(A1)", "\tcmd", "alice", "bob-2"]
        let records = values.enumerated().map { index, value in
            AccessAudit.Record(
                position: Int64(index + 1), time: Date(timeIntervalSince1970: 0), collaborationId: "c", accountId: value,
                rootHash: "+abc=", change: "granted", reason: value, actor: value)
        }
        let rows = AccessAuditText.csv(records).split(separator: "\r\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.count == values.count)
        for (row, value) in zip(rows, values) {
            let expected = value == "alice" || value == "bob-2" ? value : "'" + value
            #expect(row[3] == expected[...] && row[6] == expected[...] && row[7] == expected[...], "\(row)")
            #expect(row[4] == "'+abc=", "a root hash beginning with + is neutralised too")
        }
    }
}
