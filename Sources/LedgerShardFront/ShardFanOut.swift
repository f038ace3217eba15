import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWire
import NIOCore
import Synchronization
import TransparencyLog

/// Requests answered by asking shards' routers and joining their answers (`ShardRouter`). Each
/// shard answers for what it holds, with its own auth and checks; an answer that is not 200 is
/// passed on as it is, and a shard that does not answer makes the whole request 503, never a
/// part of it.
///
/// - `GET /v1/accounts/me/collaborations`: each shard's collaborations in the order they started
///   there, shard after shard. `minPosition` names one shard's position, so it is refused here.
/// - `GET /v1/audit/access` (`ShardFanOut+Audit.swift`), `POST /v1/privacy/erasures` and one
///   event's evidence through both levels, below.
enum ShardFanOut {
    /// A shard's router, already checked to answer.
    typealias Responder = @Sendable (Request, LedgerRequestContext) async throws -> Response

    /// A shard's answer that is not 200, passed on as it is (`ShardRouter.respond` answers with it).
    struct Refusal: Error {
        let response: Response
    }

    /// The merged answer of `shards`.
    static func myCollaborations(_ request: Request, context: LedgerRequestContext, shards: [Responder]) async throws -> Response {
        try refuseMinPosition(request)
        var merged: MyCollaborations?
        for shard in shards {
            let part = try await answer(MyCollaborations.self, try await shard(request, context))
            if merged == nil { merged = part } else { merged!.collaborations += part.collaborations }
        }
        return try merged!.response(from: request, context: context)
    }

    /// `minPosition` names one shard's position: a read of every shard refuses it.
    static func refuseMinPosition(_ request: Request) throws {
        if request.uri.queryParameters["minPosition"] != nil {
            throw DomainError.invalid(
                "minPosition names one shard's position: on shards, give it to a collaboration's own reads", code: .invalidQuery)
        }
    }

    /// `POST /v1/privacy/erasures` on every shard, one after another (`Erasure.sharded`): each
    /// shard erases what it holds of the account in its own transaction. A shard's refusal is the
    /// answer; the shards before it have erased theirs, and a retry is safe (they answer
    /// `held: false`), so a retry finishes the erasure.
    static func erasure(_ request: Request, context: LedgerRequestContext, shards: [Responder], bodyLimit: Int) async throws -> Response {
        let body = try await BodyDecoder.collect(request, limit: bodyLimit)
        var parts: [Erasure] = []
        for shard in shards {
            parts.append(
                try await answer(Erasure.self, try await shard(Request(head: request.head, body: RequestBody(buffer: body)), context)))
        }
        return try Erasure.sharded(parts).response(from: request, context: context)
    }

    /// `GET /v1/privacy/export` on every shard: `{account, shards}`, each shard's export that
    /// holds something of the account (its own pseudonym, its positions), by shard index. A shard
    /// that holds nothing answers 404, and so does the whole when none holds anything.
    static func export(_ request: Request, context: LedgerRequestContext, shards: [Responder]) async throws -> Response {
        var parts: [(shard: Int, export: PersonalDataExport)] = []
        var missing: Response?
        for (index, shard) in shards.enumerated() {
            let response = try await shard(request, context)
            if response.status == .notFound {
                missing = response
                continue
            }
            parts.append((index, try await answer(PersonalDataExport.self, response)))
        }
        guard let account = parts.first?.export.account else { return missing ?? Response(status: .notFound) }
        return try PersonalDataExport.sharded(account: account, parts).response(from: request, context: context)
    }

    /// The forms of evidence on shards: the JSON document through both levels, or one level as
    /// a C2SP tlog-proof (`format=tlog-proof`, `level=shard` or `top`): no tlog-proof holds two
    /// levels, so each is a standard proof a generic verifier checks alone, and
    /// `EvidenceVerifier.verify(_:top:key:policy:openings:)` joins them.
    enum EvidenceForm {
        case json, shardProof, topProof
    }

    /// `GET /v1/audit/evidence/{position}?shard=k` on shards: shard k's JSON evidence (its own
    /// auth and checks first), then the top log's entry for shard k's latest recorded checkpoint
    /// covering the event (`top`), and the shard's evidence again under that checkpoint if it gave
    /// it under another, so both levels meet at one shard checkpoint. As a tlog-proof: the shard's
    /// proof under that checkpoint, or the top entry's proof under the top checkpoint.
    static func evidence(
        _ request: Request, context: LedgerRequestContext, form: EvidenceForm, shard: Responder, index: Int,
        top: @Sendable (Int, Int64) async throws -> Evidence.TopLevel
    ) async throws -> Response {
        func shardEvidence(_ query: [String: String]) async throws -> Response {
            try await shard(subrequest(request, replacing: query, removing: ["shard", "level"]), context)
        }
        var evidence = try await answer(Evidence.self, try await shardEvidence(["format": "json"]))
        let level = try await top(index, evidence.event.position)
        let recorded = try CanonicalJSON.decode(ShardCheckpointRecorded.self, from: level.entry.data)
        switch form {
        case .shardProof:
            let response = try await shardEvidence(["format": "tlog-proof", "size": String(recorded.size)])
            guard response.status == .ok else { throw Refusal(response: response) }
            return response
        case .topProof:
            let proof = TlogProof(
                extra: Base64.decode(level.leaf), index: level.inclusion.leafIndex,
                proof: level.inclusion.hashes.compactMap(Base64.decode), checkpoint: level.checkpoint)
            return LogController.text(proof.text)
        case .json:
            if recorded.size != evidence.inclusion.treeSize {
                evidence = try await answer(Evidence.self, try await shardEvidence(["format": "json", "size": String(recorded.size)]))
            }
            evidence.top = level
            return try evidence.response(from: request, context: context)
        }
    }

    /// A shard's answer read as the API writes it, if it has `status` (200); else its `Refusal`.
    static func answer<T: Decodable>(_ type: T.Type, _ response: Response, status: HTTPResponse.Status = .ok) async throws -> T {
        guard response.status == status else { throw Refusal(response: response) }
        return try APIJSON.decoder().decode(T.self, from: Data(try await body(of: response).readableBytesView))
    }

    /// `request` (a GET) with `replacing`'s query parameters set, `removing`'s left out and the
    /// others kept, without a body.
    static func subrequest(_ request: Request, replacing: [String: String], removing: Set<String> = []) -> Request {
        var pairs = request.uri.queryParameters.filter { replacing[String($0.key)] == nil && !removing.contains(String($0.key)) }
            .map { (String($0.key), String($0.value)) }
        pairs += replacing.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+;#")
        let query = pairs.map {
            "\($0.addingPercentEncoding(withAllowedCharacters: allowed)!)=\($1.addingPercentEncoding(withAllowedCharacters: allowed)!)"
        }
        var head = request.head
        head.path = request.uri.path + "?" + query.joined(separator: "&")
        return Request(head: head, body: RequestBody(buffer: ByteBuffer()))
    }

    /// A response's body, collected.
    static func body(of response: Response) async throws -> ByteBuffer {
        let collected = Collected()
        try await response.body.write(collected)
        return collected.buffer.withLock { $0 }
    }

    final class Collected: ResponseBodyWriter, Sendable {
        let buffer = Mutex(ByteBuffer())
        func write(_ part: ByteBuffer) async throws { _ = buffer.withLock { $0.writeImmutableBuffer(part) } }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
