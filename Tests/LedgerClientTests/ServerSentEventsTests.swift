import Foundation
import Testing

@testable import LedgerClient

/// The feed's messages as they arrive: split anywhere, comments skipped, fields as SSE names them.
struct ServerSentEventsTests {
    static let stream = ": keep-alive\n\nid: 7\nevent: CollaborationStarted\ndata: {\"a\":\n\nid:8\nevent:X\ndata:1\n\n: tick\n\n"

    @Test("messages complete only at their blank line, however the bytes are split; comments are no message")
    func splitAnywhere() {
        let bytes = Data(Self.stream.utf8)
        for cut in 0...bytes.count {
            var parser = ServerSentEvents()
            let messages = parser.append(bytes.prefix(cut)) + parser.append(bytes.dropFirst(cut))
            #expect(
                messages == [
                    .init(id: "7", event: "CollaborationStarted", data: "{\"a\":"),
                    .init(id: "8", event: "X", data: "1"),
                ], "cut at \(cut)")
        }
        var parser = ServerSentEvents()
        #expect(parser.append(Data("id: 9\ndata: x\n".utf8)).isEmpty, "no blank line yet: nothing")
    }

    @Test("a message that is no feed event (no id, an id not a position, data not an entry) is skipped")
    func notFeedEvents() {
        #expect(LedgerClient.feedEvent(.init(id: nil, event: "X", data: "{}")) == nil)
        #expect(LedgerClient.feedEvent(.init(id: "seven", event: "X", data: "{}")) == nil)
        #expect(LedgerClient.feedEvent(.init(id: "7", event: "X", data: "not json")) == nil)
    }
}
