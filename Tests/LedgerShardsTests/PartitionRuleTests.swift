import Foundation
import LedgerShards
import LedgerTestSupport
import PostgresNIO
import Testing

/// A collaboration's partition is one rule on each side: SQL's `ledger_collaboration_partition`
/// (which `ledger_holds` and the projections call) and Swift's `ShardMap.partition(of:)`. Here they
/// answer alike, on a real PostgreSQL, for ids of every kind.
@Suite("Partition rule")
struct PartitionRuleTests {
    /// Ids of every kind: UUID-like in either case; the empty string; every length from 0 to 40
    /// (`hashtext` reads 12-byte blocks, then a tail of 0 to 11 bytes); ids as the API takes them;
    /// texts outside ASCII (accents, combining marks, symbols, emoji, CJK); and long texts.
    static func ids() -> [String] {
        var random = SystemRandomNumberGenerator()
        let api = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:/#-")
        let wide: [String] = ["a", "Z", "-", " ", "é", "e\u{301}", "\u{301}", "ß", "Ω", "✓", "🙂", "👩‍👩‍👧", "中", "文", "\u{10FFFF}"]
        func text(_ length: Int, _ letters: [String]) -> String {
            (0..<length).map { _ in letters.randomElement(using: &random)! }.joined()
        }
        var ids = [""]
        ids += (0..<2_000).map { _ in UUID().uuidString.lowercased() }
        ids += (0..<500).map { _ in UUID().uuidString }
        ids += (0...40).map { String("0123456789abcdefghijklmnopqrstuvwxyzABCDE".prefix($0)) }
        ids += (0..<1_000).map { _ in text(1 + Int.random(in: 0..<64, using: &random), api.map(String.init)) }
        ids += (0..<1_000).map { _ in text(1 + Int.random(in: 0..<60, using: &random), wide) }
        ids += [1_000, 4_097, 10_000].map { text($0, api.map(String.init) + wide) }
        ids += [String(repeating: "é", count: 5_000), String(repeating: "x", count: 65_536)]
        return ids
    }

    @Test("ledger_collaboration_partition and ShardMap.partition agree, 1 to 1,024 partitions")
    func sqlAndSwiftAgree() async throws {
        let ids = Self.ids()
        try await withTestStore { _, client, _ in
            for count in [1, 2, 4, 8, 16, 64, 1_024] {
                let map = try ShardMap(partitions: Array(repeating: "host=shard", count: count))
                var partitions: [Int32] = []
                let rows = try await client.query(
                    """
                    SELECT ledger_collaboration_partition(t, \(Int32(count)))
                    FROM unnest(\(ids)::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i
                    """)
                for try await partition in rows.decode(Int32.self) { partitions.append(partition) }
                #expect(partitions.count == ids.count)
                let differing = zip(ids, partitions).filter { map.partition(of: $0) != Int($1) }
                #expect(differing.isEmpty, "\(count) partitions, e.g. \(differing.prefix(3))")
            }
        }
    }

    @Test("ledger_holds holds an id exactly when ShardMap places it in a held partition")
    func holdsByTheRule() async throws {
        let ids = Self.ids()
        let held: Set<Int> = [1, 2, 5]
        let map = try ShardMap(partitions: (0..<8).map { held.contains($0) ? "host=here" : "host=there" })
        try await withTestStore { _, client, _ in
            try await client.query(
                "INSERT INTO ledger_held_partitions (partitions, held) VALUES (8, \(held.sorted().map(Int32.init)))")
            var holds: [Bool] = []
            let rows = try await client.query(
                "SELECT ledger_holds(t) FROM unnest(\(ids)::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i")
            for try await answer in rows.decode(Bool.self) { holds.append(answer) }
            #expect(holds.count == ids.count)
            let differing = zip(ids, holds).filter { held.contains(map.partition(of: $0)) != $1 }
            #expect(differing.isEmpty, "e.g. \(differing.prefix(3))")
        }
    }

    @Test("ledger_collaboration_partition is inlined: the projections' folds pay nothing for the call")
    func inlined() async throws {
        try await withTestStore { _, client, _ in
            var plan: [String] = []
            let rows = try await client.query(
                "EXPLAIN (VERBOSE, COSTS OFF) SELECT ledger_collaboration_partition(stream_id, 8) FROM ledger_events")
            for try await line in rows.decode(String.self) { plan.append(line) }
            let text = plan.joined(separator: "\n")
            #expect(text.contains("hashtext(") && !text.contains("ledger_collaboration_partition"), "\(text)")
        }
    }
}
