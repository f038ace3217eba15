import Foundation
import LedgerWire
import Testing

@Suite("The access audit as text")
struct AccessAuditTextTests {
    @Test("CSV cells a spreadsheet would run as a formula (=, +, -, @, tab, CR first) begin with ', others kept")
    func csvInjection() {
        let values = ["=SUM(1+1)", "+1", "-2", "@SUM(A1)", "\tcmd", "alice", "bob-2"]
        let records = values.enumerated().map { index, value in
            AccessAudit.Record(
                position: Int64(index + 1), time: Date(timeIntervalSince1970: 0), collaborationId: "c", accountId: value,
                rootHash: "+abc=", change: "granted", reason: value, actor: value)
        }
        let rows = AccessAuditText.csv(records).split(separator: "\r\n").dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        #expect(rows.count == values.count)
        for (row, value) in zip(rows, values) {
            let expected = value == "alice" || value == "bob-2" ? value : "'" + value
            #expect(row[3] == expected[...] && row[6] == expected[...] && row[7] == expected[...], "\(row)")
            #expect(row[4] == "'+abc=", "a root hash beginning with + is neutralised too")
        }
    }

    @Test("CSV quotes a cell holding a comma, a quote or a line break (RFC 4180); NDJSON is one object a line")
    func quotingAndLines() throws {
        let records = ["a,b", "say \"hi\"", "two\nlines"].enumerated().map { index, value in
            AccessAudit.Record(
                position: Int64(index + 1), time: Date(timeIntervalSince1970: 0), collaborationId: "c", accountId: value,
                rootHash: "r", change: "granted", reason: "invited", actor: "owner")
        }
        let csv = AccessAuditText.csv(records)
        #expect(csv.hasPrefix(AccessAuditText.csvHeader))
        #expect(csv.contains(",\"a,b\","))
        #expect(csv.contains(",\"say \"\"hi\"\"\","))
        #expect(csv.contains(",\"two\nlines\","))
        let lines = try AccessAuditText.ndjson(records).split(separator: "\n")
        #expect(lines.count == 3)
        for (line, record) in zip(lines, records) {
            #expect(try APIJSON.decoder().decode(AccessAudit.Record.self, from: Data(line.utf8)) == record)
        }
    }
}
