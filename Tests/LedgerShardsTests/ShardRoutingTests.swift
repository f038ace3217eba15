import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

@testable import LedgerShards

/// The ledger's routing against the real thing: PostgreSQL's own `hashtext`, and a real PL/Proxy
/// (Debian's postgresql-15-plproxy) routing by `RUN ON hashtext(id)` over two databases, with the
/// map read from that same PL/Proxy definition (issue 49: the two can never disagree).
struct ShardRoutingTests {
    static let logger = Logger(label: "shard-routing-tests")

    /// 10,000 distinct ids: collaboration ids as the API takes them (at most 64 characters of
    /// `[A-Za-z0-9._:/#-]`, every length), and a few hundred other texts for the hash itself.
    static func ids() -> [String] {
        var ids: Set<String> = []
        var n = 0
        while ids.count < 10_000 {
            ids.insert(candidate(n))
            n += 1
        }
        return Array(ids)
    }

    static func candidate(_ n: Int) -> String {
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:/#-")
        // One in twenty is another text: letters outside ASCII, 1 to 130 characters.
        let (letters, length) = n % 20 == 0 ? (Array("aé✓🙂Ω "), 1 + n % 130) : (alphabet, 1 + n % 64)
        return String((0..<length).map { _ in letters.randomElement(using: &random)! })
    }

    @Test("PostgresHashText.hash is PostgreSQL's hashtext, on 10,000 ids")
    func hashtextAgrees() async throws {
        let ids = Self.ids()
        try await withTestStore { _, client, _ in
            var hashes: [Int32] = []
            for try await hash in try await client.query(
                "SELECT hashtext(t) FROM unnest(\(ids)::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i"
            ).decode(Int32.self) {
                hashes.append(hash)
            }
            #expect(hashes.count == ids.count)
            let differing = zip(ids, hashes).filter { PostgresHashText.hash($0) != $1 }
            #expect(differing.count == 0, "e.g. \(differing.prefix(5))")
        }
    }

    @Test("PL/Proxy's RUN ON hashtext(id) and ShardMap, read from the same definition, place 10,000 ids alike")
    func plproxyAgrees() async throws {
        // Two shards over eight partitions, mapped unevenly so a wrong mask or order shows.
        let shards = [try await TestCluster.shared.makeEmptyDatabase(), try await TestCluster.shared.makeEmptyDatabase()]
        let layout = [0, 1, 1, 0, 0, 0, 1, 0]
        for shard in shards {
            try await withClient(shard) { client in
                try await client.query(
                    """
                    CREATE FUNCTION ledger_shard_probe(ids text[], OUT id text, OUT shard text) RETURNS SETOF record
                    LANGUAGE sql AS $$ SELECT i, current_database()::text FROM unnest(ids) AS i $$
                    """)
            }
        }
        let router = try await TestCluster.shared.makeEmptyDatabase()
        let ids = Self.ids()
        try await withClient(router) { client in
            let partitions = layout.enumerated().map { "p\($0.offset) \(Self.literal(Self.connection(shards[$0.element])))" }
            for statement in [
                "CREATE EXTENSION plproxy",
                "CREATE SERVER ledger_shards FOREIGN DATA WRAPPER plproxy OPTIONS (\(partitions.joined(separator: ", ")))",
                "CREATE USER MAPPING FOR PUBLIC SERVER ledger_shards OPTIONS (user \(Self.literal(router.username)), password \(Self.literal(router.password ?? "")))",
                """
                CREATE FUNCTION ledger_shard_probe(ids text[], OUT id text, OUT shard text) RETURNS SETOF record
                LANGUAGE plproxy AS $$ CLUSTER 'ledger_shards'; SPLIT ids; RUN ON hashtext(ids); $$
                """,
            ] {
                try await client.query(PostgresQuery(unsafeSQL: statement))
            }
            var placed: [String: String] = [:]
            let answer = try await client.query("SELECT id, shard FROM ledger_shard_probe(\(ids))")
            for try await (id, shard) in answer.decode((String, String).self) {
                #expect(placed.updateValue(shard, forKey: id) == nil, "\(id) answered twice")
            }
            #expect(Set(placed.keys) == Set(ids))
            let map = try await ShardCluster.map(server: "ledger_shards", client: client, logger: Self.logger)
            #expect(map.partitions == layout.map { Self.connection(shards[$0]) })
            let database = Dictionary(uniqueKeysWithValues: shards.map { (Self.connection($0), $0.database) })
            let differing = ids.filter { database[map.shard(of: $0)] != placed[$0] }
            #expect(differing.count == 0, "placed differently, e.g. \(differing.prefix(3))")
            #expect(Set(placed.values) == Set(shards.map(\.database)))
        }
    }

    @Test("a database with no such PL/Proxy cluster gives no map")
    func missingCluster() async throws {
        try await withTestStore { _, client, _ in
            await #expect(throws: ShardCluster.Unusable.self) {
                try await ShardCluster.map(server: "ledger_shards", client: client, logger: Self.logger)
            }
        }
    }

    /// A shard's libpq connection string, as the PL/Proxy definition names it.
    static func connection(_ shard: DatabaseSettings) -> String {
        "host=\(shard.host) port=\(shard.port) dbname=\(shard.database)"
    }

    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}
