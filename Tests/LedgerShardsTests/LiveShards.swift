import Foundation
import LedgerApp
import LedgerClient
import LedgerConfiguration
import LedgerPostgres
import LedgerTelemetry
import LedgerTestSupport
import LedgerTokens
import LedgerWebhooks
import Logging
import PostgresNIO
import Synchronization
import Testing
import TransparencyLog

@testable import LedgerShards

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ledger serve` on migrated shards (issue 49), with the PL/Proxy cluster defined over eight
/// partitions mapped unevenly (so a wrong mask or order shows) in a database of its own, and
/// SDK clients signed in as any account.
struct LiveShards: Sendable {
    static let logger = Logger(label: "live-shards")
    /// Partition i's shard, an index into `shards`.
    static let layout = [0, 1, 1, 0, 0, 0, 1, 0]

    let baseURL: URL
    let authority: TokenAuthority
    /// The tokens' HS256 secret (`LEDGER_JWT_SECRET`), for a `ledger` command run against it.
    let secret: String
    let map: ShardMap
    /// Each shard as its owner reaches it.
    let shards: [DatabaseSettings]
    /// The database the cluster is defined in, which keeps the top log, as its owner reaches it.
    let top: DatabaseSettings
    /// The services' login on every shard's cluster.
    let login: (name: String, password: String)

    /// `shards` (owners' settings, each database migrated; two, or more) served by one `ledger
    /// serve`, whose login exists on every shard's cluster with one password, as a deployment's does.
    /// The cluster is defined in `top` (migrated: it keeps the top log), else a database of the
    /// test cluster, with partition i on shard `layout[i]` (already so, or defined here).
    /// `shardOwner`: the login that migrates each shard as it joins, as `ledger serve` migrates.
    static func run(
        shards: [DatabaseSettings], top: DatabaseSettings? = nil, layout: [Int] = Self.layout,
        configuration: LedgerConfiguration = .testing(),
        signer: NoteSigner? = nil, witnesses: WitnessPolicy? = nil, deliveries: WebhookDeliverer.Settings = .init(),
        shardOwner: DatabaseSettings? = nil, misses: Int = 4, _ body: @Sendable (LiveShards) async throws -> Void
    ) async throws {
        LedgerMetrics.bootstrap()  // as `ledger serve` does: /metrics shows what the services record
        // The database the cluster is defined in keeps the top log: migrated, as `ledger serve` migrates it.
        let definition: DatabaseSettings
        if let top { definition = top } else { definition = try await TestCluster.shared.makeDatabase() }
        let map = try ShardMap(partitions: layout.map { connection(shards[$0]) })
        try await withClient(definition) { try await ShardCluster.define(server: "ledger_shards", as: map, client: $0, logger: logger) }
        let (name, password) = ("ledger_app_\(UInt32.random(in: 0 ... .max))", UUID().uuidString.replacingOccurrences(of: "-", with: ""))
        let service = try await PostgresAdmin.serviceLogin(name, password: password, on: definition, logger: logger)
        for shard in shards where shard.port != definition.port || shard.host != definition.host {
            _ = try await PostgresAdmin.serviceLogin(name, password: password, on: shard, logger: logger)
        }
        let secret = "live-shards-test-secret-\(UUID())"
        let authority = try await TokenAuthority(secret: secret)
        // Each shard's published checkpoint in a folder of this run's own.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-shards-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = configuration
        configuration.checkpointFile = folder.appendingPathComponent("published-checkpoint").path
        var process = LedgerProcess(
            .serve, configuration: configuration, database: service, authority: authority, signer: signer, witnesses: witnesses)
        process.shardCluster = "ledger_shards"
        process.shardOwner = shardOwner
        process.deliveries = deliveries
        // Four silent checks say a shard down, not production's two: with every suite at once on two
        // cores, the shared test cluster stalls past two now and then, and each suite here tests
        // something else. A refusal still says it at once; ShardRefusalTests' hung server takes 2.
        process.availabilityMisses = misses
        // A watchdog that decides on a wedge fails the test, not the whole test process.
        let wedged = Mutex(false)
        process.onWedged = { wedged.withLock { $0 = true } }
        defer { #expect(!wedged.withLock { $0 }, "a watchdog found a wedged pool and would have restarted the process") }
        try await process.serving(logger: logger) { running in
            try await body(
                LiveShards(
                    baseURL: running.baseURL, authority: authority, secret: secret, map: map, shards: shards, top: definition,
                    login: (name, password)))
        }
    }

    /// A shard's connection string as the cluster's partitions name it.
    static func connection(_ shard: DatabaseSettings) -> String { "host=\(shard.host) port=\(shard.port) dbname=\(shard.database)" }

    func client(_ account: String, roles: [String] = []) -> LedgerClient {
        let authority = authority
        return LedgerClient(baseURL: baseURL, transport: HTTPClientTransport()) {
            try await authority.issue(account: account, roles: roles)
        }
    }

    /// How many events shard `index` holds.
    func events(on index: Int) async throws -> Int64 {
        try await withClient(shards[index]) { client in
            try await client.query("SELECT count(*) FROM ledger_events").decode(Int64.self).reduce(0) { $0 + $1 }
        }
    }

    /// The collaborations whose events each shard holds.
    func collaborations() async throws -> [Set<String>] {
        var held: [Set<String>] = []
        for shard in shards {
            held.append(
                try await withClient(shard) { client in
                    var ids: Set<String> = []
                    let rows = try await client.query(
                        """
                        SELECT DISTINCT ledger_stream_collaboration(stream_id) FROM ledger_events
                        WHERE ledger_is_collaboration_stream(stream_id)
                        """)
                    for try await id in rows.decode(String.self) { ids.insert(id) }
                    return ids
                })
        }
        return held
    }

    /// The shard (its index in `shards`) the map places `id` (or a start's key) on.
    func shard(of id: String) -> Int {
        let connection = map.shard(of: id)
        return shards.firstIndex { connection == Self.connection($0) }!
    }

    /// A request signed in as `account`, with a JSON body if given.
    func request(_ method: String, _ path: String, as account: String, roles: [String] = [], body: String? = nil) async throws -> URLRequest
    {
        var request = URLRequest(url: URL(string: path, relativeTo: baseURL)!.absoluteURL)
        request.httpMethod = method
        request.setValue("Bearer \(try await authority.issue(account: account, roles: roles))", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}
