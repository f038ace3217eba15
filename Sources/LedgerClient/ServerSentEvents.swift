import Foundation

/// Server-Sent Events as they arrive in pieces: the messages each piece completes (a message
/// ends with a blank line; `id:`, `event:` and `data:` lines; comments start with `:`).
struct ServerSentEvents {
    struct Message: Equatable {
        var id: String?
        var event: String?
        var data = ""
    }

    private var buffer = Data()

    mutating func append(_ piece: Data) -> [Message] {
        buffer.append(piece)
        var messages: [Message] = []
        while let end = buffer.range(of: Data("\n\n".utf8)) {
            let text = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex..<end.upperBound)
            if let message = Self.parse(text) { messages.append(message) }
        }
        return messages
    }

    /// One message's lines; nil for a comment alone.
    static func parse(_ text: String) -> Message? {
        var message = Message()
        var fields = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix(":") {
            let (field, value) =
                line.firstIndex(of: ":").map {
                    (line[..<$0], line[line.index(after: $0)...].drop { $0 == " " })
                } ?? (line[...], ""[...])
            fields += 1
            switch field {
            case "id": message.id = String(value)
            case "event": message.event = String(value)
            case "data": message.data += value
            default: break
            }
        }
        return fields == 0 ? nil : message
    }
}
