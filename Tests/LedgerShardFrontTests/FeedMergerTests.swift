import Testing

@testable import LedgerShardFront

/// The change feeds of several shards merged into one stream (pure): the cursor a position per
/// shard, events held until every shard has named its start, comments passed through.
struct FeedMergerTests {
    /// Events wait until every shard has named its start; the stream opens with the cursor alone,
    /// then each event with the cursor after it and its shard.
    @Test("events wait for every shard's start; the cursor opens the stream, then events with cursor and shard")
    func merged() {
        var merger = FeedMerger(shards: 2)
        #expect(merger.take(0, ": feed after position 7\n\nid: 9\nevent: A\ndata: {\"position\":9}\n\n") == "")
        // A piece may end inside a message.
        #expect(
            merger.take(1, ": feed after position 3\n\nid: 5\nevent: B\nda")
                == "id: 7,3\n\nid: 9,3\nevent: A\ndata: {\"shard\":0,\"position\":9}\n\n")
        #expect(
            merger.take(1, "ta: {\"position\":5}\n\n: keep-alive\n\n")
                == "id: 9,5\nevent: B\ndata: {\"shard\":1,\"position\":5}\n\n: keep-alive\n\n")
        #expect(merger.cursor == "9,5")
        // A later comment naming a position is a comment like any other.
        #expect(merger.take(0, ": feed after position 1\n\n") == ": feed after position 1\n\n")
        #expect(merger.positions == [9, 5])
    }

    @Test("a shard's start and next events in one piece: the opening and held events come before those events")
    func startAndEventsInOnePiece() {
        var merger = FeedMerger(shards: 2)
        #expect(merger.take(0, ": feed after position 7\n\nid: 9\nevent: A\ndata: {\"position\":9}\n\n") == "")
        #expect(
            merger.take(1, ": feed after position 3\n\nid: 5\nevent: B\ndata: {}\n\n")
                == "id: 7,3\n\nid: 9,3\nevent: A\ndata: {\"shard\":0,\"position\":9}\n\nid: 9,5\nevent: B\ndata: {\"shard\":1}\n\n")
    }

    @Test("a cursor is one position for each shard, each a non-negative integer written one way")
    func cursors() {
        #expect(FeedMerger.positions("0,12", shards: 2) == [0, 12])
        #expect(FeedMerger.positions("4", shards: 1) == [4])
        for refused in ["12", "0,12,3", "0,-1", "0,+1", "0,01", "0, 1", "0,", ",0", "", "a,b", "0,99999999999999999999"] {
            #expect(FeedMerger.positions(refused, shards: 2) == nil, "\(refused)")
        }
    }

    /// A cursor from before shards were added gives each added shard the position of the shard it
    /// was copied from; none when an added shard was not copied from an earlier one.
    @Test("a cursor from before shards were added gives an added shard its source's position, or none")
    func cursorsAcrossMoves() {
        // Shard 2 a copy of shard 0, shard 3 a copy of shard 2.
        let sources: [Int?] = [nil, nil, 0, 2]
        #expect(FeedMerger.positions("7,3", shards: 4, sources: sources) == [7, 3, 7, 7])
        #expect(FeedMerger.positions("7,3,9", shards: 4, sources: sources) == [7, 3, 9, 9])
        #expect(FeedMerger.positions("7,3,9,2", shards: 4, sources: sources) == [7, 3, 9, 2])
        #expect(FeedMerger.positions("7", shards: 4, sources: sources) == nil, "shard 1 is no copy")
        #expect(FeedMerger.positions("7,3", shards: 3) == nil, "no sources known")
        #expect(FeedMerger.positions("7,3", shards: 3, sources: [nil, nil, 3]) == nil, "a source not before it")
        #expect(FeedMerger.positions("7,3,1,1,1", shards: 4, sources: sources) == nil, "more positions than shards")
        #expect(FeedMerger.positions("7,-3", shards: 4, sources: sources) == nil)
    }
}
