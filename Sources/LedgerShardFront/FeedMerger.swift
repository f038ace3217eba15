import Foundation
import LedgerAPI
import LedgerFeed

/// The change feed of several shards as one stream of Server-Sent Events (`ShardFeed`), pure:
/// each shard's messages in the order they come, so a collaboration's events (all on one shard)
/// keep theirs. Each event's `id` becomes the merged stream's cursor, every shard's position
/// (`p0,p1,…`, shard k's the last it looked at), and its data names its shard (`"shard":k`: a
/// position is its shard's). Comments pass as they are.
///
/// Until every shard has named the position it starts after (`FeedStream.startComment`), events
/// are held back, since their cursors need every shard's; then the stream opens with an `id:`
/// line alone, which dispatches no event but sets the client's last event id (the SSE standard),
/// so a client that drops before its first event resumes where it started.
struct FeedMerger {
    /// Each shard's position: the last it looked at, once it has named where it starts.
    private(set) var positions: [Int64?]
    /// Each shard's text after its last whole message.
    private var partial: [String]
    /// Messages that came before every shard had named its start, with their shard.
    private var held: [(shard: Int, message: Substring)] = []

    init(shards: Int) {
        positions = Array(repeating: nil, count: shards)
        partial = Array(repeating: "", count: shards)
    }

    /// The cursor after every shard's position (each known).
    var cursor: String { positions.map { String($0 ?? 0) }.joined(separator: ",") }

    /// What to write for `text`, the next piece of shard `shard`'s stream.
    mutating func take(_ shard: Int, _ text: String) -> String {
        partial[shard] += text
        var messages: [Substring] = []
        while let end = partial[shard].range(of: "\n\n") {
            messages.append(Substring(partial[shard][..<end.lowerBound]))
            partial[shard] = String(partial[shard][end.upperBound...])
        }
        var out = ""
        for message in messages {
            if positions[shard] == nil, let start = FeedStream.startPosition(message) {
                positions[shard] = start
                guard !positions.contains(nil) else { continue }
                // Every shard's start is known now: open with the cursor, then what was held back,
                // before anything after this start.
                out += "id: \(cursor)\n\n"
                for (from, message) in held { out += merged(message, from: from) }
                held = []
            } else if positions.contains(nil) {
                held.append((shard, message))
            } else {
                out += merged(message, from: shard)
            }
        }
        return out
    }

    /// One message as the merged stream writes it: an event with the stream's cursor as its id and
    /// its shard in its data; a comment as it is.
    private mutating func merged(_ message: Substring, from shard: Int) -> String {
        guard !message.hasPrefix(":") else { return message + "\n\n" }
        var lines: [String] = []
        for line in message.split(separator: "\n") {
            if line.hasPrefix("id: "), let position = Int64(line.dropFirst(4)) {
                positions[shard] = position
                lines.append("id: \(cursor)")
            } else if line == "data: {}" {
                lines.append("data: {\"shard\":\(shard)}")
            } else if line.hasPrefix("data: {") {
                lines.append("data: {\"shard\":\(shard)," + line.dropFirst(7))
            } else {
                lines.append(String(line))
            }
        }
        return lines.joined(separator: "\n") + "\n\n"
    }

    /// The positions a cursor names (`p0,p1,…`, one for each of `shards`), or nil if it is not one.
    /// A cursor from before shards were added (fewer positions) gives each added shard the position
    /// of the shard it was copied from (`sources`, an earlier shard's index): its log is that
    /// shard's up to the copy, and it sends only the moved collaborations' events, which that
    /// shard no longer sends (docs/SCALING.md, "Adding a shard"). An added shard that is no copy
    /// of an earlier one makes such a cursor not one.
    static func positions(_ cursor: String, shards: Int, sources: [Int?] = []) -> [Int64]? {
        let parts = cursor.split(separator: ",", omittingEmptySubsequences: false)
        var positions = parts.compactMap { part in Int64(part).flatMap { $0 >= 0 && String($0) == part ? $0 : nil } }
        guard positions.count == parts.count, (1...shards).contains(positions.count) else { return nil }
        while positions.count < shards {
            guard let source = sources.indices.contains(positions.count) ? sources[positions.count] : nil, source < positions.count
            else { return nil }
            positions.append(positions[source])
        }
        return positions
    }
}
