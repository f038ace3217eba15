import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO

/// Adding a shard by moving one partition to it, offline (`ledger shards move`, docs/SCALING.md
/// "Adding a shard"): the new shard T starts as a copy of the partition's shard S, so every event
/// keeps its position, its leaf and its evidence, and T's log continues S's chain. Each then says
/// which partitions it holds (`ledger_held_partitions`) and forgets what it keeps beside the log
/// of the others' collaborations (`ledger_forget_unheld`), and the cluster's partition names T.
///
/// Every step can run again: a move cut short by a fault is finished by the same command. T is
/// checked before anything (`checkTarget`), then marked (its holdings, and a cursor key of its
/// own), then the map names T, then S forgets the partition: until the map changes, nothing of S
/// has changed; after it, `ledger serve` refuses S until it is marked (`ShardHoldings.source`).
public enum ShardMove {
    public struct Refused: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    public struct Report: Sendable {
        /// The partition's shard before, and T.
        public var source: String
        public var target: String
        /// The cluster's map after the move.
        public var map: ShardMap
        /// Whether T was made here (`CREATE DATABASE … TEMPLATE`), not found as a copy made before.
        public var copied: Bool
        /// The position T's log starts from: S's head at the copy (T's head when finishing).
        public var head: Int64
        /// Whether this call finished a move cut short after its map change.
        public var finished: Bool
    }

    /// Moves `partition` of the cluster `server` (defined in `owner`'s database) to `target`, a
    /// connection string as the cluster's partitions name shards. T is made as a copy of S when it
    /// does not exist and is on S's server; elsewhere it must already be a copy of S at its head.
    /// A move cut short is finished by the same call: before the map changed it starts again (T
    /// still a copy at S's head), after it S is marked (T records its source).
    public static func move(server: String, partition: Int, to target: String, owner: DatabaseSettings, logger: Logger) async throws
        -> Report
    {
        // The target as named, before anything is read: a string the ledger cannot use, PostgreSQL's
        // own databases, the ledger's own.
        let to = try ShardConnection.settings(target, login: owner)
        try ShardConnection.refuseReserved(target, to, owner: owner)
        let map = try await owner.withClient(logger: logger) { try await ShardCluster.map(server: server, client: $0, logger: logger) }
        guard map.partitions.indices.contains(partition) else {
            throw Refused("partition \(partition) is not one of \(server)'s \(map.partitions.count)")
        }
        if map.partitions[partition] == target {
            return try await finish(map, partition: partition, to: to, target: target, owner: owner, logger: logger)
        }
        let source = map.partitions[partition]
        guard !map.shards.contains(target) else {
            throw Refused("\(target) is already a shard of \(server): name a new database as the new shard")
        }
        let moved = try ShardMap(partitions: map.partitions.enumerated().map { $0.offset == partition ? target : $0.element })
        // A shard's index is its log's origin and its published file: none may change.
        guard moved.shards == map.shards + [target] else {
            throw Refused(
                "moving partition \(partition) would change the shards' order (each shard is numbered by its first partition) or leave \(source) none: move a partition after every shard's first"
            )
        }
        let from = try ShardConnection.settings(source, login: owner)
        let taken = try map.shards.map { try ShardConnection.settings($0, login: owner) }
        guard !taken.map(ShardConnection.place).contains(ShardConnection.place(to)) else {
            throw Refused("\(target) names the database of a shard of \(server), spelled otherwise: name a new database as the new shard")
        }
        // Read before anything changes: the option as the definition names it (`p7`, `partition_7`…).
        let option = try await owner.withClient(logger: logger) {
            try await ShardCluster.partitionOption(server: server, partition: partition, client: $0, logger: logger)
        }

        try await checkTarget(to, target: target, from: from, logger: logger)
        try await refuseIfServed(from, logger: logger)
        let copied = try await copy(from, to: to, owner: owner, logger: logger)
        let head = try await Self.head(from, logger: logger)
        guard let head, try await Self.head(to, logger: logger) == head else {
            throw Refused(
                "\(target) is not a copy of \(source) at its head (a copy made before, or by a move cut short, that \(source) has outgrown since): drop it, or make it a copy again (docs/SCALING.md), and move again"
            )
        }
        let sourceKey = try await cursorKey(from, logger: logger)
        _ = try await to.withClient(logger: logger) { try await Migrator(client: $0, logger: logger).migrate() }
        try await to.withClient(logger: logger) { client in
            try await client.transaction(logger: logger) { connection in
                try await ShardHoldings.hold(moved, shard: target, copiedFrom: source, on: connection, logger: logger)
                try await ownCursorKey(on: connection, unlike: sourceKey, logger: logger)
                // S's checkpoints, signed under S's origin, came with the copy: T signs its own tree
                // under its own from its first start. The tables are append-only for every role;
                // their owner lifts that for this one change of a database no one has read from.
                for table in ["ledger_published_checkpoints", "ledger_checkpoints"] {
                    try await connection.queryUnlessClosed(
                        PostgresQuery(unsafeSQL: "ALTER TABLE \(table) DISABLE TRIGGER \(table)_no_delete"), logger: logger)
                    try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: "DELETE FROM \(table)"), logger: logger)
                    try await connection.queryUnlessClosed(
                        PostgresQuery(unsafeSQL: "ALTER TABLE \(table) ENABLE TRIGGER \(table)_no_delete"), logger: logger)
                }
                // S's backups' slots and S's services' leases are not T's.
                try await connection.queryUnlessClosed("DELETE FROM ledger_backup_positions", logger: logger)
                try await connection.queryUnlessClosed("DELETE FROM ledger_lease_holders", logger: logger)
            }
        }
        // S records what it holds under the map as it is (it forgets nothing), then the map names
        // T, then S forgets the partition: a fault after the map changed leaves S holding the
        // partition with a record the map disagrees with, so `ledger serve` refuses S alone
        // (`ShardHoldings.source`: it would act on what T serves), and the move finishes by
        // running again.
        try await from.withClient(logger: logger) { client in
            try await client.transaction(logger: logger) { connection in
                try await ShardHoldings.hold(map, shard: source, copiedFrom: nil, on: connection, logger: logger)
            }
        }
        try await owner.withClient(logger: logger) { client in
            try await client.queryUnlessClosed(
                PostgresQuery(
                    unsafeSQL:
                        "ALTER SERVER \(PostgresAdmin.quoteIdentifier(server)) OPTIONS (SET \(option) \(ShardCluster.literal(target)))"),
                logger: logger
            ) { _ in }
        }
        try await from.withClient(logger: logger) { client in
            try await client.transaction(logger: logger) { connection in
                try await ShardHoldings.hold(moved, shard: source, copiedFrom: nil, on: connection, logger: logger)
            }
        }
        logger.notice("partition moved", metadata: ["partition": "\(partition)", "from": "\(source)", "to": "\(target)"])
        return Report(source: source, target: target, map: moved, copied: copied, head: head.position, finished: false)
    }

    /// A move whose map change was made: S (the shard T records it was copied from) marked.
    static func finish(
        _ map: ShardMap, partition: Int, to: DatabaseSettings, target: String, owner: DatabaseSettings, logger: Logger
    ) async throws -> Report {
        let recorded = try await PostgresAdmin.withConnection(to, logger: logger) { try await ShardHoldings.record($0, logger: logger) }
        guard let source = recorded?.copiedFrom, map.shards.contains(source), source != target else {
            throw Refused("\(target) holds partition \(partition) already, and records no move to it: nothing to move or finish")
        }
        let from = try ShardConnection.settings(source, login: owner)
        try await refuseIfServed(from, logger: logger)
        // T got its own key when marked, before the map changed; this gives one to a T marked by an
        // earlier ledger.
        let sourceKey = try await cursorKey(from, logger: logger)
        try await PostgresAdmin.withConnection(to, logger: logger) { try await ownCursorKey(on: $0, unlike: sourceKey, logger: logger) }
        try await from.withClient(logger: logger) { client in
            try await client.transaction(logger: logger) { connection in
                try await ShardHoldings.hold(map, shard: source, copiedFrom: nil, on: connection, logger: logger)
            }
        }
        let head = try await Self.head(to, logger: logger)?.position ?? 0
        logger.notice("partition move finished", metadata: ["partition": "\(partition)", "from": "\(source)", "to": "\(target)"])
        return Report(source: source, target: target, map: map, copied: false, head: head, finished: true)
    }

    /// The move is offline: S's writes must be still while it is copied and marked.
    static func refuseIfServed(_ shard: DatabaseSettings, logger: Logger) async throws {
        let serving = try await PostgresAdmin.withConnection(shard, logger: logger) { connection in
            try await connection.queryUnlessClosed(
                """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'ledger %'
                """, logger: logger
            ).decode(Int64.self).reduce(0, +)
        }
        guard serving == 0 else {
            throw Refused("\(shard.database) is in use by \(serving) ledger session(s): stop every `ledger serve` before a move")
        }
    }

    /// T made as a copy of S if it does not exist: true if made here.
    static func copy(_ from: DatabaseSettings, to: DatabaseSettings, owner: DatabaseSettings, logger: Logger) async throws -> Bool {
        var maintenance = to
        maintenance.database = owner.host == to.host && owner.port == to.port ? owner.database : "postgres"
        let exists = try await PostgresAdmin.withConnection(maintenance, logger: logger) { connection in
            try await connection.queryUnlessClosed("SELECT count(*) FROM pg_database WHERE datname = \(to.database)", logger: logger)
                .decode(Int64.self).reduce(0, +) > 0
        }
        if exists { return false }
        guard from.host == to.host, from.port == to.port else { throw missingElsewhere(from, to) }
        // Refused by PostgreSQL while any session uses S.
        try await PostgresAdmin.createDatabaseIfMissing(to.database, template: from.database, on: maintenance, logger: logger)
        return true
    }

    /// A log's head: its position and chain hash (a copy at S's head has both S's).
    struct Head: Equatable {
        var position: Int64
        var hash: String
    }

    static func head(_ shard: DatabaseSettings, logger: Logger) async throws -> Head? {
        try await PostgresAdmin.withConnection(shard, logger: logger) { connection in
            var found: Head?
            let rows = try await connection.queryUnlessClosed("SELECT position, encode(hash, 'hex') FROM ledger_head", logger: logger)
            for try await (position, hash) in rows.decode((Int64, String).self) { found = Head(position: position, hash: hash) }
            return found
        }
    }
}
