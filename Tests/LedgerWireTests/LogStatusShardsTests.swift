import Foundation
import LedgerWire
import Testing

/// `LogStatus.sharded` (pure): on shards the status is the top log's, with every shard's views
/// and expiry service.
struct LogStatusShardsTests {
    static func status(head: Int64, running: Bool, due: Date?, overdue: Int64, projections: [String]) -> LogStatus {
        LogStatus(
            head: head, checkpoint: nil, checkpointLagEvents: head, checkpointLagSeconds: 0,
            projections: projections.map { .init(name: $0, position: head, lagEvents: 0, lagSeconds: 0, status: "running") },
            expiry: .init(running: running, nextDueAt: due, overdue: overdue), tree: .init(size: head, state: "intact"))
    }

    /// The top log's head and tree; each shard's projections named by it; expiry running only if on
    /// every shard, its earliest due, the sum overdue.
    @Test("sharded status: the top log's head; each shard's projections; expiry running only if on every shard")
    func sharded() throws {
        let (early, late) = (Date(timeIntervalSince1970: 1_000), Date(timeIntervalSince1970: 2_000))
        let top = Self.status(head: 7, running: false, due: nil, overdue: 0, projections: ["top-view"])
        let parts = [
            Self.status(head: 40, running: true, due: late, overdue: 1, projections: ["membership", "history"]),
            Self.status(head: 30, running: true, due: early, overdue: 2, projections: ["membership"]),
        ]
        let whole = LogStatus.sharded(top: top, parts)
        #expect(whole.head == 7 && whole.tree?.size == 7 && whole.shard == nil)
        #expect(whole.projections.map(\.name) == ["membership", "history", "membership"])
        #expect(whole.projections.map(\.shard) == [0, 0, 1])
        #expect(whole.expiry.running && whole.expiry.nextDueAt == early && whole.expiry.overdue == 3)
        #expect(whole.shards?.map(\.shard) == [0, 1] && whole.shards?.map(\.head) == [40, 30])
        // One shard whose expiry service does not run: the whole does not.
        let stopped = LogStatus.sharded(top: top, [parts[0], Self.status(head: 1, running: false, due: nil, overdue: 0, projections: [])])
        #expect(!stopped.expiry.running && stopped.expiry.nextDueAt == late && stopped.expiry.overdue == 1)
        // Written as the API writes it: shard fields only where there are shards.
        let text = String(decoding: try APIJSON.encoder().encode(whole), as: UTF8.self)
        #expect(text.contains("\"shards\"") && text.contains("\"shard\":1"))
        let one = String(decoding: try APIJSON.encoder().encode(top), as: UTF8.self)
        #expect(!one.contains("shard"))
    }
}
