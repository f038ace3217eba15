import Foundation
import LedgerIndex
import Testing

@Suite("Index revision records")
struct IndexRevisionTests {
    static let root = Hash256([0xFF, 0xFF, 0xFF] + (3..<32).map { UInt8($0 * 7) })!

    @Test("a revision's data is exactly its size and root, and reads back")
    func data() throws {
        let revision = try IndexRevision(logSize: 1_234, root: Self.root)
        #expect(revision.data == #"{"logSize":1234,"root":"\#(Self.root.base64)"}"#)
        #expect(Self.root.base64.contains("/"), "a slash written as it is, never escaped")
        let read = try IndexRevision(streamId: "ledger-index", type: "IndexRevisionRecorded", data: revision.data)
        #expect(read == revision)
        #expect(
            try IndexRevision(
                streamId: "ledger-index", type: "IndexRevisionRecorded", data: #"{"logSize":0,"root":"\#(Hash256.zero.base64)"}"#
            ).logSize == 0)
        #expect(throws: IndexRevision.Refused.self) { try IndexRevision(logSize: -1, root: Self.root) }
    }

    @Test("anything but the exact bytes, stream and type is refused")
    func refusals() {
        let root = Self.root.base64
        let stray = String(root.dropLast(2)) + "B="
        for data in [
            #"{"logSize": 1234,"root":"\#(root)"}"#, #"{"root":"\#(root)","logSize":1234}"#, #"{"logSize":01234,"root":"\#(root)"}"#,
            #"{"logSize":-1,"root":"\#(root)"}"#, #"{"logSize":+1,"root":"\#(root)"}"#,
            #"{"logSize":9223372036854775808,"root":"\#(root)"}"#,
            #"{"logSize":1.0,"root":"\#(root)"}"#, #"{"logSize":1,"root":"\#(stray)"}"#, #"{"logSize":1,"root":"\#(root.dropLast())"}"#,
            #"{"logSize":1,"root":"\#(Data(count: 31).base64EncodedString())"}"#, #"{"logSize":1,"root":"\#(root)"}\#n"#,
            #"{"logSize":1,"root":"\#(root.replacingOccurrences(of: "/", with: #"\/"#))"}"#, #"{"logSize":,"root":"\#(root)"}"#, "", "{}",
        ] {
            #expect(throws: IndexRevision.Refused.self, "\(data)") {
                try IndexRevision(streamId: IndexRevision.stream, type: IndexRevision.type, data: data)
            }
        }
        let good = #"{"logSize":1,"root":"\#(root)"}"#
        for (stream, type) in [
            ("ledger-index", "IndexRevision"), ("collaboration-x", "IndexRevisionRecorded"), ("ledger-index ", "IndexRevisionRecorded"),
        ] {
            #expect(throws: IndexRevision.Refused.self) { try IndexRevision(streamId: stream, type: type, data: good) }
        }
    }
}
