import Foundation
import LedgerClient
import LedgerPostgres
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 66: a shard that cannot serve, whatever the reason, is refused at once while the other
/// serves. Shard 1 runs on a cluster of its own, made to refuse the services' new connections
/// each way a server does (its sessions then ended, as an outage ends them), or to hang.
@Suite("A shard that refuses", .serialized)
struct ShardRefusalTests {
    enum Refusal: String, CaseIterable, Sendable {
        case notAccepting = "55000, ALLOW_CONNECTIONS false"
        case tooMany = "53300, CONNECTION LIMIT 0"
        case gone = "3D000, the database renamed away"
        case noConnect = "42501, CONNECT revoked"
        case login = "28P01, the login's password changed"
        case hung = "a hung server (SIGSTOP)"
    }

    /// Shard 1 refuses each way in turn, on one ledger. While it does: shard 0's reads answer 200,
    /// shard 1's answer 200 or 503 (with Retry-After) within 8 s each, 503 at least once (the
    /// watch ends after three), `/ready` answers 200, and no request answers 500; then shard 1
    /// serves again. A hung server refuses nothing: it is told from a machine too loaded to
    /// answer only by two silent checks (about 12 s), so its bound is 20 s, watched for 30 s.
    @Test("one shard refusing each way: its requests 503 within 8 s (hung: 20 s), the other's 200, /ready 200")
    func refusing() async throws {
        try await withOwnCluster(logger: LiveShards.logger) { ownOwner, own in
            let shards = [try await TestCluster.shared.makeDatabase(), ownOwner]
            try await LiveShards.run(shards: shards, misses: 2) { live in
                let devin = live.client("devin")
                var on: [String?] = [nil, nil]
                for n in 0..<64 where on.contains(nil) {
                    let id = try await devin.prepareCollaboration(
                        localIdentifier: "r\(n)", title: "Refusal \(n)", initiator: Initiator(handle: "devin@example.com")
                    ).identifier
                    on[live.shard(of: id)] = on[live.shard(of: id)] ?? id
                }
                let (serving, refusing) = (try #require(on[0]), try #require(on[1]))
                try await waitUntil(timeout: .seconds(60), "both collaborations projected") {
                    for id in [serving, refusing] where try await Self.get(live, "v1/collaborations/\(id)/members").status != 200 {
                        return false
                    }
                    return true
                }
                for refusal in Refusal.allCases {
                    try await Self.apply(refusal, own: own, owner: ownOwner, login: live.login.name)
                    var refused = 0
                    // A refusal is seen by the next probe and its reach (up to about 5 s on the server);
                    // with every suite at once on two cores the client's own scheduling has added
                    // 1.5 s to that (5.98 s seen, the server's log saying 4.46 s). 8 s still tells a
                    // refusal from the pool's one-minute hold, which is what this bounds.
                    let (bound, watched): (Duration, Duration) =
                        refusal == .hung ? (.seconds(20), .seconds(30)) : (.seconds(8), .seconds(12))
                    let until = ContinuousClock.now + watched
                    while ContinuousClock.now < until && refused < 3 {
                        #expect(try await Self.get(live, "v1/collaborations/\(serving)/members").status == 200, "\(refusal.rawValue)")
                        let started = ContinuousClock.now
                        let answer = try await Self.get(live, "v1/collaborations/\(refusing)/members")
                        #expect(ContinuousClock.now - started < bound, "\(refusal.rawValue): shard 1 answered late")
                        #expect([200, 503].contains(answer.status), "\(refusal.rawValue): \(answer.status) \(answer.body)")
                        if answer.status == 503 {
                            refused += 1
                            #expect(answer.retryAfter != nil)
                        }
                        #expect(try await Self.get(live, "ready").status == 200, "\(refusal.rawValue): /ready")
                        // Paced: a client's requests, not a load test on a machine running every suite.
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    #expect(refused > 0, "\(refusal.rawValue): shard 1 never refused")
                    try await Self.undo(refusal, own: own, owner: ownOwner, login: live.login)
                    try await waitUntil(timeout: .seconds(60), "shard 1 serves again after \(refusal.rawValue)") {
                        try await Self.get(live, "v1/collaborations/\(refusing)/members").status == 200
                    }
                }
            }
        }
    }

    static func get(_ live: LiveShards, _ path: String) async throws -> (status: Int, retryAfter: String?, body: String) {
        let (body, response) = try await TestHTTP.data(for: try await live.request("GET", path, as: "devin"))
        return (response.statusCode, response.value(forHTTPHeaderField: "Retry-After"), String(decoding: body, as: UTF8.self))
    }

    /// Shard 1's cluster made to refuse (as its owner, from its `postgres` database), then its
    /// services' sessions ended.
    static func apply(_ refusal: Refusal, own: EmbeddedPostgres, owner: DatabaseSettings, login: String) async throws {
        let database = PostgresAdmin.quoteIdentifier(owner.database)
        switch refusal {
        case .notAccepting: try await admin(owner, "ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
        case .tooMany: try await admin(owner, "ALTER DATABASE \(database) CONNECTION LIMIT 0")
        case .gone:
            try await admin(owner, "ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
            try await endSessions(owner)
            try await admin(owner, "ALTER DATABASE \(database) RENAME TO \(PostgresAdmin.quoteIdentifier(owner.database + "_away"))")
            try await admin(owner, "ALTER DATABASE \(PostgresAdmin.quoteIdentifier(owner.database + "_away")) ALLOW_CONNECTIONS true")
        case .noConnect:
            try await admin(owner, "REVOKE CONNECT ON DATABASE \(database) FROM PUBLIC")
        case .login:
            try await admin(owner, "ALTER ROLE \(PostgresAdmin.quoteIdentifier(login)) PASSWORD 'not-the-one'")
        case .hung:
            try await own.freeze()
            return
        }
        try await endSessions(owner)
    }

    static func undo(
        _ refusal: Refusal, own: EmbeddedPostgres, owner: DatabaseSettings, login: (name: String, password: String)
    ) async throws {
        let database = PostgresAdmin.quoteIdentifier(owner.database)
        switch refusal {
        case .notAccepting: try await admin(owner, "ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
        case .tooMany: try await admin(owner, "ALTER DATABASE \(database) CONNECTION LIMIT -1")
        case .gone:
            try await admin(owner, "ALTER DATABASE \(PostgresAdmin.quoteIdentifier(owner.database + "_away")) RENAME TO \(database)")
        case .noConnect: try await admin(owner, "GRANT CONNECT ON DATABASE \(database) TO PUBLIC")
        case .login:
            try await admin(owner, "ALTER ROLE \(PostgresAdmin.quoteIdentifier(login.name)) PASSWORD '\(login.password)'")
        case .hung: try await own.thaw()
        }
    }

    /// The services' sessions on shard 1's database ended (the test's own are elsewhere).
    static func endSessions(_ owner: DatabaseSettings) async throws {
        try await admin(
            owner,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(owner.database)' AND pid <> pg_backend_pid()")
    }

    static func admin(_ owner: DatabaseSettings, _ sql: String) async throws {
        try await withClient(owner.with(database: "postgres")) { try await $0.query(PostgresQuery(unsafeSQL: sql)) }
    }
}
