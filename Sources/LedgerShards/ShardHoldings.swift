import Foundation
import LedgerPostgres
import Logging
import PostgresNIO

/// What each shard records it holds once partitions have moved (`ledger_held_partitions`,
/// docs/SCALING.md "Adding a shard"): the partitions, and the shard it was copied from. A shard
/// without a record holds whatever the map routes to it.
public enum ShardHoldings {
    public struct Record: Sendable, Equatable {
        public var partitions: Int
        public var held: Set<Int>
        public var copiedFrom: String?
    }

    public struct Unfinished: Error, CustomStringConvertible {
        public var description: String
    }

    /// Records the partitions `shard` holds in `map` (and the shard it was copied from; nil keeps
    /// what it had: a source may itself be a copy), and forgets what it keeps beside its log of
    /// the rest (`ledger_forget_unheld`).
    static func hold(_ map: ShardMap, shard: String, copiedFrom: String?, on connection: PostgresConnection, logger: Logger) async throws {
        let held = map.partitions.indices.filter { map.partitions[$0] == shard }.map(Int32.init)
        try await connection.queryUnlessClosed(
            """
            INSERT INTO ledger_held_partitions (partitions, held, copied_from)
            VALUES (\(Int32(map.partitions.count)), \(held), \(copiedFrom))
            ON CONFLICT (only_row) DO UPDATE SET partitions = excluded.partitions, held = excluded.held,
                copied_from = coalesce(excluded.copied_from, ledger_held_partitions.copied_from)
            """, logger: logger)
        try await connection.queryUnlessClosed("SELECT ledger_forget_unheld()", logger: logger)
    }

    /// The shard's record, if it has one.
    static func record(_ connection: PostgresConnection, logger: Logger) async throws -> Record? {
        let rows = try await connection.queryUnlessClosed(
            "SELECT partitions, held, copied_from FROM ledger_held_partitions", logger: logger)
        var found: Record?
        for try await (partitions, held, copiedFrom) in rows.decode((Int32, [Int32], String?).self) {
            found = Record(partitions: Int(partitions), held: Set(held.map(Int.init)), copiedFrom: copiedFrom)
        }
        return found
    }

    /// Shard `index`'s record checked against `map` (`clients` in `map.shards`' order), and the
    /// shard it was copied from, as an index (what a feed cursor from before a move reads for it).
    /// Refused, so that no shard serves what it has forgotten or holds what another serves: a
    /// record that disagrees with the map, and a source without one (a move cut short: `ledger
    /// shards move` run again finishes it). The source is read only for a copy, within 10 s.
    public static func source(of index: Int, map: ShardMap, clients: [PostgresClient], logger: Logger) async throws -> Int? {
        let again = "a move was cut short: stop every `ledger serve`, then run the same `ledger shards move` again"
        let found = try await clients[index].withConnection { try await record($0, logger: logger) }
        let mapped = Set(map.partitions.indices.filter { map.partitions[$0] == map.shards[index] })
        guard let found else { return nil }
        guard found.partitions == map.partitions.count && found.held == mapped else {
            throw Unfinished(
                description:
                    "shard \(index) records partitions \(found.held.sorted()) of \(found.partitions), the cluster maps it \(mapped.sorted()) of \(map.partitions.count): \(again)"
            )
        }
        guard let source = found.copiedFrom.flatMap({ map.shards.firstIndex(of: $0) }) else { return nil }
        let copied = try await withDeadline(.seconds(10), "shard \(source)'s record, which shard \(index) was copied from") {
            try await clients[source].withConnection { try await record($0, logger: logger) }
        }
        if copied == nil {
            throw Unfinished(description: "shard \(source) was copied to shard \(index) and records nothing it holds: \(again)")
        }
        return source
    }
}
