import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import Testing

@testable import LedgerShardFront
@testable import LedgerShards

/// Where the shard router sends each request (pure): paths read as Hummingbird's router reads
/// them, so no request reaches a route on one shard that should cover every shard or another.
struct ShardRouterTests {
    static let map = try! ShardMap(partitions: ["a", "b", "b", "a", "a", "a", "b", "a"])
    static let router = ShardRouter(
        map: map,
        shards: [Router(context: LedgerRequestContext.self).buildResponder(), Router(context: LedgerRequestContext.self).buildResponder()],
        topLog: Router(context: LedgerRequestContext.self).buildResponder(), available: [{ true }, { true }], topAvailable: { true },
        topEvidence: { _, _ in throw CancellationError() }, topEntry: { _, _ in throw CancellationError() }, bodyLimit: 1024)

    static func to(_ method: HTTPRequest.Method, _ path: String, key: String? = nil, collaboration: String? = nil)
        -> ShardRouter<RouterResponder<LedgerRequestContext>>.Destination
    {
        router.destination(method: method, path: path, idempotencyKey: key, collaboration: collaboration)
    }

    @Test("empty segments and trailing slashes skipped as in Hummingbird: every-shard paths never reach one")
    func emptySegments() {
        for (method, path) in [
            (HTTPRequest.Method.get, "/v1//privacy/erasures"), (.put, "/v1//privacy/export"), (.post, "//v1/feed"),
            (.get, "/v1/audit//other/1"),
            (.put, "/v1/collaborations/"),
        ] {
            #expect(Self.to(method, path) == .notAcrossShards, "\(method) \(path)")
        }
        #expect(Self.to(.post, "/v1/webhooks/") == .webhookRegistration)
        #expect(Self.to(.get, "/v1//webhooks") == .webhookList)
        #expect(Self.to(.delete, "/v1/webhooks//abc/") == .webhookDeletion)
        for (method, path) in [(HTTPRequest.Method.put, "/v1/webhooks"), (.delete, "/v1/webhooks"), (.get, "/v1/webhooks/abc")] {
            #expect(Self.to(method, path) == .noDatabase, "\(method) \(path): no route, the first shard's 404 or 405")
        }
        #expect(Self.to(.get, "/v1/collaborations/") == .collaborationsList)
        #expect(Self.to(.get, "/v1//collaborations") == .collaborationsList)
        #expect(Self.to(.get, "/v1//log/status/") == .logStatus)
        for path in ["/v1//log/checkpoint", "/v1/log/key/", "/v1/log//proofs/consistency"] {
            #expect(Self.to(.get, path) == .topLog, "\(path)")
        }
        #expect(Self.to(.get, "/v1//accounts/me/collaborations/") == .myCollaborations)
        #expect(Self.to(.get, "/v1/audit//access/") == .accessAudit(only: nil))
        #expect(Self.to(.post, "/v1/audit/access") == .notAcrossShards)
        #expect(Self.to(.get, "/v1/audit//lookup/") == .lookup(shard: nil))
        #expect(Self.to(.post, "/v1/audit/lookup") == .notAcrossShards)
        #expect(Self.to(.get, "//v1/feed/") == .feed)
        #expect(Self.to(.post, "/v1//privacy/erasures/") == .erasure)
        #expect(Self.to(.get, "/v1//privacy/export/") == .export)
        #expect(
            Self.router.destination(method: .get, path: "/v1/audit//evidence/7/", idempotencyKey: nil, named: "1") == .evidence(shard: 1))
        for named in [nil, "2", "01", "-1", "x"] {
            #expect(
                Self.router.destination(method: .get, path: "/v1/audit/evidence/7", idempotencyKey: nil, named: named)
                    == .evidence(shard: nil))
        }
        #expect(Self.to(.post, "/v1/collaborations/", key: "k1") == Self.to(.post, "/v1/collaborations", key: "k1"))
        #expect(Self.to(.post, "/v1/collaborations/") == .anyShard)
    }

    @Test("a collaboration's requests go to its shard, its id read as the API does (any case, empty segments)")
    func collaborations() {
        for n in 0..<200 {
            let id = UUID().uuidString.lowercased()
            let shard = Self.map.shards.firstIndex(of: Self.map.shard(of: id))!
            for path in [
                "/v1/collaborations/\(id)", "/v1/collaborations/\(id.uppercased())/members", "/v1/collaborations//\(id)/participants",
                "/v1//collaborations/\(id)/proofs/\(n)/",
            ] {
                #expect(Self.to(.get, path) == .shard(shard), "\(path)")
            }
            #expect(Self.to(.get, "/v1/audit/access", collaboration: id.uppercased()) == .accessAudit(only: shard))
            #expect(Self.to(.get, "/v1/audit/lookup", collaboration: id.uppercased()) == .lookup(shard: shard))
        }
        #expect(Self.to(.post, "/v1/challenges") == .bodyCollaboration)
        #expect(Self.to(.get, "/v1/challenges") == .noDatabase, "the router's 405, with no database")
    }

    @Test("logs: /tlog/shard/{k}/… to shard k as its /tlog/…, k in one spelling; the rest of /tlog/ the top's")
    func logs() {
        #expect(Self.to(.get, "/tlog/shard/1/checkpoint") == .shardLog(1, path: "/tlog/checkpoint"))
        #expect(Self.to(.get, "/tlog//shard/0/tile/0/000") == .shardLog(0, path: "/tlog/tile/0/000"))
        for path in ["/tlog/shard/01/checkpoint", "/tlog/shard/2/checkpoint", "/tlog/shard/-0/checkpoint", "/tlog/shard/1"] {
            #expect(Self.to(.get, path) == .noDatabase, "\(path)")
        }
        #expect(Self.to(.get, "/tlog/checkpoint") == .topLog)
        #expect(Self.to(.get, "/tlog/tile/0/000") == .topLog)
    }

    @Test("what needs no database goes to the first shard's router, up or not; readiness asks every shard")
    func noDatabase() {
        for path in ["/", "/health", "/metrics", "/openapi.yaml", "/console", "/nowhere", "/v1/nowhere"] {
            #expect(Self.to(.get, path) == .noDatabase, "\(path)")
        }
        #expect(Self.to(.get, "/ready") == .everyShard)
    }
}
