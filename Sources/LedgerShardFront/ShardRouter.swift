import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerShards
import LedgerWire

/// One HTTP server in front of several shards (docs/SCALING.md): each request goes whole to the
/// router of the shard that holds its collaboration (`buildRouter` over that shard's pool), so a
/// command, a proof and a read of a collaboration run on one primary, as on a single store.
///
/// - `/v1/collaborations/{id}…`: the shard of `id` (lowercased, as the API reads ids);
/// - `POST /v1/challenges`: the shard of the body's `collaborationId`;
/// - `POST /v1/collaborations` (a start): the shard of its `Idempotency-Key`, so a retry meets its
///   first append; without a key, any shard. The shard picks an id it holds (`CollaborationCommands`).
/// - `/ready`: ready while one shard at least is (`ready`): a shard's outage is every instance's,
///   and taking instances out of a load balancer for it would stop the other shards' service too;
/// - `/tlog/shard/{k}/…`: shard k's own log (its checkpoint and tiles, its router's `/tlog/…`);
///   the rest of `/tlog/…`: the top log (`buildLogRouter`), whose entries are the shards'
///   checkpoints;
/// - `GET /v1/accounts/me/collaborations`: every shard, the answers merged (`ShardFanOut`);
/// - `GET /v1/audit/access`: every shard, shard after shard, or with `collaboration` its shard
///   alone (`ShardFanOut.auditAccess`);
/// - `GET /v1/feed`: every shard's feed, merged, its cursor a position per shard (`ShardFeed`);
/// - `POST /v1/privacy/erasures`: every shard, one after another, each shard's answer in
///   `shards` (`ShardFanOut.erasure`);
/// - `GET /v1/audit/evidence/{position}?shard=k`: shard k's evidence under its checkpoint the top
///   log recorded, with that checkpoint's entry in the top log (`ShardFanOut.evidence`);
/// - `GET /v1/audit/lookup?collaboration=ID`: its shard's lookup under its checkpoint the top log
///   recorded, with that checkpoint's entry in the top log and the partition map the entry names
///   (`ShardFanOut.lookup`), its next pages (`after` with the first page's `size`) the shard's
///   own; `?identity=ROOTHASH`: every shard's, alike (`identityLookup`), one page;
/// - `GET /v1/privacy/export`: every shard, each one's export that holds something in `shards`
///   (`ShardFanOut.export`);
/// - `GET /v1/collaborations`: every shard, shard after shard (`ShardFanOut.collaborations`);
/// - `/v1/log/…`: the top log's key, checkpoints and proofs; `GET /v1/log/status`: the top log's
///   status with every shard's (`ShardFanOut.logStatus`);
/// - `POST /v1/webhooks`: the body's collaboration's shard, or every shard without one, with one
///   id and secret; `GET /v1/webhooks` and `DELETE /v1/webhooks/{id}`: every shard
///   (`ShardFanOut+Webhooks.swift`);
/// - the rest (health, metrics, the OpenAPI document, the console, unknown paths): the first
///   shard's router, which needs no database for them.
///
/// Paths are read as Hummingbird's router reads them: empty segments (`/v1//feed`, a trailing
/// `/`) are skipped, so a request reaches the route its shard's router matches.
///
/// A shard whose database does not answer (`available`) is not sent requests: they are refused
/// with 503 `database_unavailable` and `Retry-After`, never answered by another shard; so is the
/// top log's, while its database does not answer (`topAvailable`).
///
/// One database is one shard with no top log (`init(single:)`): every request goes to its router
/// as it came, so the wire is one database's (its router takes an evidence request's `shard` and
/// `level` as one database does: `ShardQuery`).
public struct ShardRouter<Shard: HTTPResponder>: HTTPResponder where Shard.Context == LedgerRequestContext {
    public typealias Context = LedgerRequestContext

    let map: ShardMap
    /// Each shard's router, in `map.shards`' order.
    let shards: [Shard]
    /// The top log's router (`buildLogRouter`).
    let topLog: RouterResponder<LedgerRequestContext>
    /// Whether each shard's database answers now.
    let available: [@Sendable () -> Bool]
    /// Whether the top log's database answers now.
    let topAvailable: @Sendable () -> Bool
    /// The top level of an event's evidence: shard k's checkpoint covering a position, in the top log.
    let topEvidence: @Sendable (Int, Int64) async throws -> Evidence.TopLevel
    /// The top log's entry at a position, included under its checkpoint of a size (the map a
    /// recorded checkpoint names, for a lookup).
    let topEntry: @Sendable (Int64, Int64) async throws -> IndexLookup.Entry
    let bodyLimit: Int
    /// The shard each shard was copied from when it was added (`ledger shards move`), if it was,
    /// as each shard's join found it (nil until it joins: its feed is refused until then).
    let sources: @Sendable () -> [Int?]
    /// One database (`init(single:)`).
    let single: Bool

    public init(
        map: ShardMap, shards: [Shard], topLog: RouterResponder<LedgerRequestContext>, available: [@Sendable () -> Bool],
        topAvailable: @escaping @Sendable () -> Bool, topEvidence: @escaping @Sendable (Int, Int64) async throws -> Evidence.TopLevel,
        topEntry: @escaping @Sendable (Int64, Int64) async throws -> IndexLookup.Entry, bodyLimit: Int,
        sources: @escaping @Sendable () -> [Int?] = { [] }
    ) {
        precondition(shards.count == map.shards.count && available.count == shards.count, "one router per shard of the map")
        (self.map, self.shards, self.topLog, self.available, self.topAvailable, self.topEvidence, self.bodyLimit) = (
            map, shards, topLog, available, topAvailable, topEvidence, bodyLimit
        )
        (self.topEntry, self.sources) = (topEntry, sources)
        single = false
    }

    /// One database's router alone: one shard, no top log.
    public init(single router: Shard, bodyLimit: Int) {
        (map, shards, topLog, available, topAvailable, self.bodyLimit, sources) = (
            try! ShardMap(partitions: ["single"]), [router], Router(context: Context.self).buildResponder(), [{ true }], { true },
            bodyLimit, { [] }
        )
        topEvidence = { _, _ in throw DomainError(.routeNotFound, "one database has no top log") }
        topEntry = { _, _ in throw DomainError(.routeNotFound, "one database has no top log") }
        single = true
    }

    /// The shard's answer; a refusal made here (outside every shard's middleware) is answered
    /// as the routers answer theirs, and a shard's refusal within a fan-out as the shard gave it.
    public func respond(to request: Request, context: Context) async throws -> Response {
        do {
            if single { return try await shards[0].respond(to: request, context: context) }
            return try await route(request, context: context)
        } catch let refusal as DomainError {
            return try refusal.response(from: request, context: context)
        } catch let refusal as ShardFanOut.Refusal {
            return refusal.response
        }
    }

    func route(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let query = request.uri.queryParameters
        switch destination(
            method: request.method, path: request.uri.path, idempotencyKey: request.headers[.idempotencyKey],
            collaboration: query["collaboration"].map(String.init), named: query["shard"].map(String.init))
        {
        case .shard(let index):
            return try await send(request, context: context, to: index)
        case .noDatabase:
            return try await shards[0].respond(to: request, context: context)
        case .anyShard:
            guard let index = shards.indices.filter({ available[$0]() }).randomElement() else { throw Self.noShard }
            return try await send(request, context: context, to: index)
        case .everyShard:
            return try await ready(request, context: context)
        case .bodyCollaboration:
            let body = try await BodyDecoder.collect(request, limit: bodyLimit)
            request = Request(head: request.head, body: RequestBody(buffer: body))
            // A body without a collaboration id is refused alike by any shard that answers.
            guard let id = Self.collaborationId(in: body) else {
                guard let index = shards.indices.first(where: { available[$0]() }) else { throw Self.noShard }
                return try await send(request, context: context, to: index)
            }
            return try await send(request, context: context, to: shard(of: id))
        case .webhookRegistration:
            let body = try await BodyDecoder.collect(request, limit: bodyLimit)
            guard let id = Self.collaborationId(in: body) else {
                return try await ShardFanOut.registerWebhook(request, body: body, context: context, shards: everyShardAsked())
            }
            return try await send(Request(head: request.head, body: RequestBody(buffer: body)), context: context, to: shard(of: id))
        case .webhookList:
            return try await ShardFanOut.webhooks(request, context: context, shards: try everyShardAnswering())
        case .webhookDeletion:
            return try await ShardFanOut.deleteWebhook(request, context: context, shards: everyShardAsked())
        case .myCollaborations:
            return try await ShardFanOut.myCollaborations(request, context: context, shards: try everyShardAnswering())
        case .collaborationsList:
            return try await ShardFanOut.collaborations(request, context: context, shards: try everyShardAnswering())
        case .logStatus:
            guard topAvailable() else { throw Self.topUnavailable }
            let topLog = topLog
            return try await ShardFanOut.logStatus(
                request, context: context, top: { try await topLog.respond(to: $0, context: $1) }, shards: try everyShardAnswering())
        case .evidence(let index):
            guard let index else {
                throw DomainError.invalid(
                    "on shards a position is its shard's: name the event's shard with ?shard=k, k from 0 to \(shards.count - 1)",
                    code: .invalidQuery)
            }
            let form: ShardFanOut.EvidenceForm
            switch (request.uri.queryParameters["format"], request.uri.queryParameters["level"]) {
            // The JSON evidence holds both levels: `level=shard` (as one database takes it) changes nothing there.
            case (nil, nil), ("json", nil), (nil, "shard"), ("json", "shard"): form = .json
            case ("tlog-proof", nil), ("tlog-proof", "shard"): form = .shardProof
            case ("tlog-proof", "top"): form = .topProof
            case (nil, _), ("json", _), ("tlog-proof", _):
                throw DomainError.invalid("level is shard, or top with format=tlog-proof", code: .invalidQuery)
            default: throw DomainError.invalid("format must be json or tlog-proof", code: .invalidQuery)
            }
            // The shard's tree the evidence is under is the one the top log recorded.
            guard request.uri.queryParameters["size"] == nil else {
                throw DomainError.invalid(
                    "on shards, evidence is under the shard's checkpoint the top log recorded: leave out size", code: .invalidQuery)
            }
            guard topAvailable() else { throw Self.topUnavailable }
            return try await ShardFanOut.evidence(
                request, context: context, form: form, shard: responder(index), index: index, top: topEvidence)
        case .lookup(let index):
            let paged = request.uri.queryParameters["after"] != nil
            guard let index else {
                // Neither key: any shard's 400 says what a lookup takes.
                if request.uri.queryParameters["identity"] == nil {
                    guard let any = shards.indices.first(where: { available[$0]() }) else { throw Self.noShard }
                    return try await send(request, context: context, to: any)
                }
                // An identity's lookup: every shard's, under one partition map.
                guard !paged else {
                    throw DomainError.invalid(
                        "on shards, an identity's lookup is not answered in pages yet: an identity named by more than 10,000 events of one shard's log cannot be listed",
                        code: .invalidQuery)
                }
                guard request.uri.queryParameters["size"] == nil else {
                    throw DomainError.invalid(
                        "on shards, a lookup is under each shard's checkpoint the top log recorded: leave out size", code: .invalidQuery)
                }
                guard topAvailable() else { throw Self.topUnavailable }
                return try await ShardFanOut.identityLookup(
                    request, context: context, shards: shards.indices.map(responder), top: topEvidence, entry: topEntry)
            }
            // A next page (`after`) is the shard's own, under the shard checkpoint the first page's
            // top entry picked (`size`, required): the pages merged carry the first one's top
            // level and map, and a verifier checks them as one answer.
            if paged {
                // From 1: `after=0` would be a first page under a checkpoint the caller picked.
                guard let after = request.uri.queryParameters["after"].flatMap({ Int64(String($0)) }), after >= 1 else {
                    throw DomainError.invalid("after must be a log position, 1 or more", code: .invalidQuery)
                }
                guard request.uri.queryParameters["size"] != nil else {
                    throw DomainError.invalid(
                        "on shards, a next page of a lookup is asked under the first page's checkpoint: give its size with after",
                        code: .invalidQuery)
                }
                return try await send(request, context: context, to: index)
            }
            guard request.uri.queryParameters["size"] == nil else {
                throw DomainError.invalid(
                    "on shards, a lookup is under the shard's checkpoint the top log recorded: leave out size", code: .invalidQuery)
            }
            guard topAvailable() else { throw Self.topUnavailable }
            return try await ShardFanOut.lookup(
                request, context: context, shard: responder(index), index: index, top: topEvidence, entry: topEntry)
        case .export:
            return try await ShardFanOut.export(request, context: context, shards: everyShardAsked())
        case .erasure:
            return try await ShardFanOut.erasure(request, context: context, shards: everyShardAsked(), bodyLimit: bodyLimit)
        case .feed:
            return try await ShardFeed.respond(request, context: context, shards: try everyShardAnswering(), sources: sources())
        case .accessAudit(let only):
            guard let only else { return try await ShardFanOut.auditAccess(request, context: context, shards: try everyShardAnswering()) }
            guard available[only]() else { throw Self.unavailable(shard: only) }
            let responders = shards.indices.map { $0 == only ? responder(only) : nil }
            return try await ShardFanOut.auditAccess(request, context: context, shards: responders)
        case .shardLog(let index, let path):
            var head = request.head
            head.path = path + (request.uri.query.map { "?" + $0 } ?? "")
            return try await send(Request(head: head, body: request.body), context: context, to: index)
        case .topLog:
            guard topAvailable() else { throw Self.topUnavailable }
            return try await topLog.respond(to: request, context: context)
        case .notAcrossShards:
            throw DomainError(
                .notAcrossShards, "\(request.method) \(request.uri.path) reads or writes every shard, which this ledger does not serve yet")
        }
    }

    /// Every shard's router, if every shard's database answers: a read of every shard is whole or refused.
    func everyShardAnswering() throws -> [ShardFanOut.Responder] {
        if let down = shards.indices.first(where: { !available[$0]() }) {
            throw DomainError(
                .databaseUnavailable, "shard \(down) is unavailable for the moment, and this read covers every shard; retry",
                retryAfter: 1)
        }
        return shards.indices.map(responder)
    }

    /// The shard's answer, if its database answers.
    func send(_ request: Request, context: Context, to index: Int) async throws -> Response {
        try await responder(index)(request, context)
    }

    static func unavailable(shard: Int) -> DomainError {
        DomainError(.databaseUnavailable, "shard \(shard), which holds this, is unavailable for the moment; retry", retryAfter: 1)
    }

    static var noShard: DomainError {
        DomainError(.databaseUnavailable, "no shard's database answers for the moment; retry", retryAfter: 1)
    }

    static var topUnavailable: DomainError {
        DomainError(.databaseUnavailable, "the top log's database is unavailable for the moment; retry", retryAfter: 1)
    }

    struct NamedCollaboration: Decodable {
        var collaborationId: String?
    }

    /// The body's `collaborationId`, if it is JSON that names one.
    static func collaborationId(in body: ByteBuffer) -> String? {
        (try? JSONDecoder().decode(NamedCollaboration.self, from: Data(body.readableBytesView)))?.collaborationId
    }

    /// The index of the shard that holds `id`, read as the API reads collaboration ids.
    func shard(of id: String) -> Int {
        let key = (try? Identifiers.collaborationId(id)) ?? id
        return map.shards.firstIndex(of: map.shard(of: key))!
    }
}
