import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO

/// The shard map as PL/Proxy defines it: a foreign server of the `plproxy` wrapper whose options
/// `p0` … `p{n-1}` (or `partition_0` …) are the partitions' connection strings. The ledger reads
/// the same definition its SQL functions route by, so where it routes a request itself it cannot
/// disagree with them.
///
/// Fails closed: a definition PL/Proxy would read differently from `ShardMap` (modular mapping, an
/// option it does not know, partitions missing or repeated) is refused, not approximated.
public enum ShardCluster {
    public struct Unusable: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// PL/Proxy's cluster options other than partitions (its `cluster_config_options`).
    static let settings: Set<String> = [
        "statement_timeout", "connection_lifetime", "query_timeout", "disable_binary", "modular_mapping",
        "keepalive_idle", "keepalive_interval", "keepalive_count",
    ]

    /// The map of the cluster `server` defines, read from the database `client` reaches.
    public static func map(server: String, client: PostgresClient, logger: Logger) async throws -> ShardMap {
        let (serverOptions, wrapperOptions) = try await options(server: server, client: client, logger: logger)
        return try map(server: server, serverOptions: serverOptions, wrapperOptions: wrapperOptions)
    }

    /// The options of the cluster `server` (a foreign server of the plproxy wrapper) and of its wrapper, as
    /// `pg_foreign_server` keeps them (`name=value`).
    static func options(server: String, client: PostgresClient, logger: Logger) async throws -> (server: [String], wrapper: [String]) {
        let found = try await client.queryUnlessClosed(
            """
            SELECT coalesce(s.srvoptions, '{}'), coalesce(w.fdwoptions, '{}')
            FROM pg_foreign_server s JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw
            WHERE s.srvname = \(server) AND w.fdwname = 'plproxy'
            """, logger: logger
        ) { rows in try await rows.decode(([String], [String]).self).first { _ in true } }
        guard let found else {
            throw Unusable(description: "no PL/Proxy cluster named \(server) (a foreign server of the plproxy wrapper)")
        }
        return found
    }

    /// The name of partition `partition`'s option in the cluster's definition, as written there
    /// (`p7`, `partition_7`, `p07`: PL/Proxy reads each as partition 7).
    public static func partitionOption(server: String, partition: Int, client: PostgresClient, logger: Logger) async throws -> String {
        let options = try await options(server: server, client: client, logger: logger).server
        guard let name = options.map({ split($0).0 }).first(where: { partitionNumber($0) == partition }) else {
            throw Unusable(description: "\(server): no option names partition \(partition)")
        }
        return name
    }

    /// Defines the PL/Proxy cluster `server` in the database `client` reaches (the extension made
    /// if missing), its partitions naming `map`'s shards. Run again with the same map, nothing
    /// changes; a cluster of that name with another map is refused, not redefined: moving a
    /// partition moves its collaborations' data first (docs/SCALING.md).
    public static func define(server: String, as map: ShardMap, client: PostgresClient, logger: Logger) async throws {
        try await PostgresAdmin.createExtension("plproxy", client: client, logger: logger)
        let defined = try await client.queryUnlessClosed(
            "SELECT count(*) FROM pg_foreign_server WHERE srvname = \(server)", logger: logger
        ) { try await $0.decode(Int64.self).reduce(0, +) }
        if defined > 0 {
            guard try await self.map(server: server, client: client, logger: logger) == map else {
                throw Unusable(description: "\(server) is already defined with other partitions")
            }
            return
        }
        let options = map.partitions.enumerated().map { "p\($0.offset) \(literal($0.element))" }.joined(separator: ", ")
        try await client.queryUnlessClosed(
            PostgresQuery(
                unsafeSQL: "CREATE SERVER \(PostgresAdmin.quoteIdentifier(server)) FOREIGN DATA WRAPPER plproxy OPTIONS (\(options))"),
            logger: logger
        ) { _ in }
    }

    /// The shard databases `names` beside `owner`'s, made if missing, the cluster `server` mapping
    /// `partitions` partitions over them in turn (`define`), and each shard migrated (`migrate`):
    /// `ledger shards init`, and the benchmarks' throwaway shards. `onOwnServer`: the partitions
    /// name the databases alone, on the server the cluster is defined on (the embedded cluster's
    /// port changes at each start); else with `owner`'s host and port.
    @discardableResult
    public static func create(
        server: String, databases names: [String], partitions: Int, owner: DatabaseSettings, onOwnServer: Bool, logger: Logger
    ) async throws -> ShardMap {
        for name in names { try await PostgresAdmin.createDatabaseIfMissing(name, on: owner, logger: logger) }
        let shards = names.map {
            onOwnServer
                ? ShardConnection.keywords(database: $0) : ShardConnection.keywords(host: owner.host, port: owner.port, database: $0)
        }
        return try await create(server: server, shards: shards, partitions: partitions, owner: owner, logger: logger)
    }

    /// The cluster `server` mapping `partitions` partitions over the databases `shards` names
    /// (connection strings, each a database that exists with `owner`'s login, such as a Patroni
    /// cluster's leader behind its HAProxy: deploy/patroni), in turn, and each shard migrated.
    @discardableResult
    public static func create(server: String, shards: [String], partitions: Int, owner: DatabaseSettings, logger: Logger) async throws
        -> ShardMap
    {
        // Refused before anything is defined: a connection string the ledger cannot use, one of
        // PostgreSQL's own databases or the ledger's own (`refuseReserved`), one database named
        // twice (in any order of its keywords: `ShardConnection.place`; `serve` refuses the same).
        var seen: Set<String> = []
        for shard in shards {
            let settings = try ShardConnection.settings(shard, login: owner)
            try ShardConnection.refuseReserved(shard, settings, owner: owner)
            guard seen.insert(ShardConnection.place(settings)).inserted else {
                throw Unusable(description: "\(shard) names a database another --shard names already: name each shard once")
            }
        }
        let map = try ShardMap(partitions: (0..<partitions).map { shards[$0 % shards.count] })
        try await DatabaseFailure.explaining(nil, on: owner) {
            try await owner.withClient(logger: logger) { try await define(server: server, as: map, client: $0, logger: logger) }
        }
        try await migrate(server: server, owner: owner, logger: logger)
        return map
    }

    /// Each shard of the cluster `server` defined in `owner`'s database, migrated with `owner`'s
    /// login (`ledger shards init`; `ledger serve` migrates each shard as it joins).
    static func migrate(server: String, owner: DatabaseSettings, logger: Logger) async throws {
        let map = try await owner.withClient(logger: logger) { try await self.map(server: server, client: $0, logger: logger) }
        for shard in map.shards {
            let applied = try await ShardConnection.settings(shard, login: owner).withClient(logger: logger) {
                try await Migrator(client: $0, logger: logger).migrate()
            }
            if !applied.isEmpty { logger.info("migrations applied", metadata: ["shard": "\(shard)", "names": "\(applied)"]) }
        }
    }

    /// A SQL string literal (DDL takes no bound parameters), in the escape form, so that it reads
    /// the same whatever `standard_conforming_strings` says.
    static func literal(_ text: String) -> String {
        "E'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// The map of a cluster whose options are `name=value` strings, as `pg_foreign_server` keeps them.
    static func map(server: String, serverOptions: [String], wrapperOptions: [String]) throws -> ShardMap {
        func setting(_ name: String, _ value: String) throws {
            if name == "modular_mapping" {
                guard value == "0" else {
                    throw Unusable(description: "\(server): modular_mapping is set; the ledger routes by PL/Proxy's hash mask only")
                }
            } else if !settings.contains(name) {
                throw Unusable(description: "\(server): unknown option \(name)")
            }
        }
        for option in wrapperOptions {
            let (name, value) = split(option)
            try setting(name, value)
        }
        var partitions: [Int: String] = [:]
        for option in serverOptions {
            let (name, value) = split(option)
            guard let number = partitionNumber(name) else {
                try setting(name, value)
                continue
            }
            guard partitions.updateValue(value, forKey: number) == nil else {
                throw Unusable(description: "\(server): partition \(number) is defined twice")
            }
        }
        guard let last = partitions.keys.max(), partitions.count == last + 1 else {
            throw Unusable(description: "\(server): partitions must be numbered from 0 without gaps")
        }
        do {
            return try ShardMap(partitions: (0...last).map { partitions[$0]! })
        } catch {
            throw Unusable(description: "\(server): \(error)")
        }
    }

    private static func split(_ option: String) -> (String, String) {
        guard let equals = option.firstIndex(of: "=") else { return (option, "") }
        return (String(option[..<equals]), String(option[option.index(after: equals)...]))
    }

    /// `p7` or `partition_7`: 7. PL/Proxy reads the number with strtoul, which also takes a sign
    /// or spaces; such names are not partitions here, so they fail as unknown options.
    static func partitionNumber(_ name: String) -> Int? {
        for prefix in ["partition_", "p"] where name.hasPrefix(prefix) {
            let digits = name.dropFirst(prefix.count)
            if !digits.isEmpty, digits.count <= 9, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) {
                return Int(digits)
            }
        }
        return nil
    }
}
