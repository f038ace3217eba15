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
/// part of it. A write of every shard (an erasure, a webhook of every collaboration registered
/// or deleted) and an export cut short say what each shard did (`ShardFanOut+CutShort.swift`).
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
    /// shard erases what it holds of the account in its own transaction. A shard's refusal before
    /// any shard erased is the answer. Cut short (a shard unavailable, failing or refusing), the
    /// answer says what each shard did (`CutShort`: each erasure done, with its position and
    /// time), and a retry finishes it: a shard that has erased answers `held: false`.
    ///
    /// A shard that does not answer does not stop the others: each shard's part is its own, so
    /// what can be erased now is, rather than kept for the length of one shard's outage. A retry
    /// cannot name a position an earlier attempt erased at (the shard keeps nothing that links the
    /// account to its erasure, SPEC "Nothing links the person back"), so the answer cut short
    /// names it, and says so.
    static func erasure(_ request: Request, context: LedgerRequestContext, shards: [Responder?], bodyLimit: Int) async throws -> Response {
        let body = try await BodyDecoder.collect(request, limit: bodyLimit)
        let asked = try await askEvery(shards, request, body: body, context: context) {
            $0.status == .ok ? try await answer(Erasure.self, $0) : nil
        }
        let outcomes = try asked.get()
        let erased = outcomes.compactMap(\.done)
        if erased.count == shards.count { return try Erasure.sharded(erased).response(from: request, context: context) }
        let parts = outcomes.enumerated().map { index, outcome in
            outcome.done.map { CutShort.Part(shard: index, completed: true, erasure: $0) } ?? failedPart(index, outcome.failure!)
        }
        let (done, notDone) = (parts.filter(\.completed).map(\.shard), parts.filter { !$0.completed }.map(\.shard))
        return try cutShort(
            "the erasure was cut short: done on \(named(done)), not on \(named(notDone)). Retry to finish it; keep this answer, "
                + "the only one to name the erasures done (a shard that has erased answers held: false, and keeps nothing that "
                + "links the account to its erasure)",
            parts: parts, failures: outcomes.compactMap(\.failure), request: request, context: context)
    }

    /// `GET /v1/privacy/export` on every shard: `{account, shards}`, each shard's export that
    /// holds something of the account (its own pseudonym, its positions), by shard index. A shard
    /// that holds nothing answers 404, and so does the whole when none holds anything. An export
    /// without a shard's part is no answer to an access request: cut short, it is refused (503
    /// `cut_short`), naming the shards that answered (`CutShort`) and giving none of their parts.
    static func export(_ request: Request, context: LedgerRequestContext, shards: [Responder?]) async throws -> Response {
        var missing: Response?
        let asked = try await askEvery(shards, request, context: context) { response -> PersonalDataExport?? in
            switch response.status {
            case .ok: return .some(try await answer(PersonalDataExport.self, response))
            case .notFound:
                missing = missing ?? response
                return .some(nil)
            default: return nil
            }
        }
        let outcomes = try asked.get()
        guard outcomes.allSatisfy({ $0.done != nil }) else {
            let parts = outcomes.enumerated().map { index, outcome in
                outcome.failure.map { failedPart(index, $0) } ?? CutShort.Part(shard: index, completed: true)
            }
            let (answered, silent) = (parts.filter(\.completed).map(\.shard), parts.filter { !$0.completed }.map(\.shard))
            return try cutShort(
                "the export is incomplete: \(named(answered)) answered, \(named(silent)) did not, so none of it is given; retry",
                parts: parts, failures: outcomes.compactMap(\.failure), request: request, context: context)
        }
        let held = outcomes.enumerated().compactMap { index, outcome in outcome.done!.map { (shard: index, export: $0) } }
        guard let account = held.first?.export.account else { return missing ?? Response(status: .notFound) }
        return try PersonalDataExport.sharded(account: account, held).response(from: request, context: context)
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
