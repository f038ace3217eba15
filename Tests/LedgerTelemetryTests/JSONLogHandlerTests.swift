import Foundation
import Logging
import Synchronization
import Testing

@testable import LedgerTelemetry

/// `LEDGER_LOG_FORMAT=json`: each call writes one line, one JSON object with the fixed keys and
/// the metadata at the top level, nested metadata as JSON arrays and objects.
struct JSONLogHandlerTests {
    @Test("a line is one JSON object: time, level, label, message, source and the metadata")
    func oneObjectPerLine() throws {
        let lines = Mutex<[String]>([])
        var handler = JSONLogHandler(label: "ledger", write: { line in lines.withLock { $0.append(line) } })
        handler.metadata["hb.request.id"] = "r-1"
        handler.log(
            level: .warning, message: "projector: step failed",
            metadata: ["tries": .array(["1", "2"]), "db": .dictionary(["port": "5432"])],
            source: "LedgerProjections", file: #file, function: #function, line: #line)
        let written = lines.withLock { $0 }
        #expect(written.count == 1)
        let line = try #require(written.first)
        #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "warning")
        #expect(object["label"] as? String == "ledger")
        #expect(object["message"] as? String == "projector: step failed")
        #expect(object["source"] as? String == "LedgerProjections")
        #expect(object["hb.request.id"] as? String == "r-1")
        #expect(object["tries"] as? [String] == ["1", "2"])
        #expect((object["db"] as? [String: Any])?["port"] as? String == "5432")
        let time = try #require(object["time"] as? String)
        #expect(time.hasSuffix("Z") && time.contains("T"), "RFC 3339: \(time)")
    }

    @Test("the call's metadata wins over the handler's for the same key")
    func explicitMetadataWins() throws {
        let lines = Mutex<[String]>([])
        var handler = JSONLogHandler(label: "ledger", write: { line in lines.withLock { $0.append(line) } })
        handler.metadata["phase"] = "start"
        handler.log(level: .info, message: "m", metadata: ["phase": "run"], source: "s", file: #file, function: #function, line: #line)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines.withLock { $0[0] }.utf8)) as? [String: Any])
        #expect(object["phase"] as? String == "run")
    }
}
