import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import LedgerWebhooks
import LedgerWire
import Logging
import NIOCore

/// Webhooks on shards (docs/SCALING.md): each shard delivers its own events, to the webhooks
/// registered in its database. A webhook of one collaboration is registered on its shard alone
/// (`ShardRouter` sends it there); one of every collaboration its owner owns is registered on every
/// shard with one id and one secret, so the receiver checks every delivery with the one secret.
extension ShardFanOut {
    /// `POST /v1/webhooks` without `collaborationId`: every shard, one after another, each with
    /// the same id and secret (`LedgerRequestContext.webhookSeed`). The answer is the first
    /// shard's registration (`shard` 0), with the secret.
    ///
    /// On every shard or on none: one registered on some shards only would get their
    /// collaborations' events and miss the others' without a word. So while a shard does not
    /// answer none is asked, and when a shard does not register it (refusing, failing, gone
    /// meanwhile) the shards that did delete it again, and so does the failing one unless it
    /// refused (a 4xx commits nothing; a 5xx or a lost answer may follow a commit). The id is
    /// this registration's alone, and a deletion the caller's own; a retry makes one webhook.
    /// Either way the answer says what each shard did (`CutShort`): 503 `cut_short`, or the
    /// shard's refusal; one a shard refused before any registered it is the answer as it is.
    static func registerWebhook(
        _ request: Request, body: ByteBuffer, context: LedgerRequestContext, shards: [Responder?]
    ) async throws -> Response {
        var context = context
        context.webhookSeed = .init()
        let id = context.webhookSeed!.id.uuidString.lowercased()
        let notAsked = ErrorBody.Detail(
            code: ErrorCode.cutShort.rawValue, message: "not asked: a webhook of every collaboration is registered on every shard or none")
        let down = shards.indices.filter { shards[$0] == nil }
        guard down.isEmpty else {
            var failures: [Failure] = []
            for index in down { failures.append(try await unavailable(index, request: request, context: context)) }
            let parts = shards.indices.map { index in
                CutShort.Part(
                    shard: index, completed: false, error: shards[index] == nil ? failures[down.firstIndex(of: index)!].detail : notAsked)
            }
            return try cutShort(
                "the webhook was not registered: a webhook of every collaboration is registered on every shard or none, and "
                    + "\(named(down)) \(down.count == 1 ? "is" : "are") unavailable for the moment; retry",
                parts: parts, failures: failures, request: request, context: context)
        }
        var registered: [Webhook] = []
        var failure: Failure?
        for (index, shard) in shards.enumerated() {
            let asked = Request(head: request.head, body: RequestBody(buffer: body))
            let outcome = try await ask(shard, index: index, asked, context: context) {
                $0.status == .created ? try await answer(Webhook.self, $0, status: .created) : nil
            }
            guard let webhook = outcome.done else {
                failure = outcome.failure
                break
            }
            registered.append(webhook)
        }
        guard let failure else {
            var first = registered[0]
            first.shard = 0
            return try EditedResponse(status: .created, response: first).response(from: request, context: context)
        }
        let failed = registered.count
        if failure.isRefusal && registered.isEmpty { return failure.response }
        // Deleted again from every shard that registered it, and the failing one if it may have.
        var head = request.head
        (head.method, head.path) = (.delete, "/v1/webhooks/\(id)")
        var undone: [Bool] = []
        for index in 0..<(failure.isRefusal || !failure.asked ? failed : failed + 1) {
            let answer = try? await shards[index]!(Request(head: head, body: RequestBody(buffer: ByteBuffer())), context)
            undone.append(answer.map { [.noContent, .notFound].contains($0.status) } == true)
            if !undone[index] {
                context.logger.error(
                    "a webhook registration cut short may be left on shard \(index); delete it", metadata: ["webhook": "\(id)"])
            }
        }
        let parts = shards.indices.map { index in
            switch index {
            case ..<failed: CutShort.Part(shard: index, completed: true, webhook: id, undone: undone[index])
            case failed:
                CutShort.Part(shard: index, completed: false, undone: undone.count > failed ? undone[index] : nil, error: failure.detail)
            default: CutShort.Part(shard: index, completed: false, error: notAsked)
            }
        }
        let (removed, left) = (undone.indices.filter { undone[$0] && $0 < failed }, undone.indices.filter { !undone[$0] })
        var message = "the webhook was not registered: shard \(failed) \(failure.isRefusal ? "refused it" : "did not register it")"
        if !removed.isEmpty { message += ", and it was deleted again from \(named(removed))" }
        if !left.isEmpty { message += "; it may be left on \(named(left)): delete webhook \(id)" }
        return try cutShort(
            message + (failure.isRefusal ? "" : "; retry"), parts: parts, failures: [failure], request: request, context: context)
    }

    /// `GET /v1/webhooks`: every shard's, shard after shard, each named by its shard (a webhook
    /// of every collaboration once for each shard, with that shard's delivery state).
    static func webhooks(_ request: Request, context: LedgerRequestContext, shards: [Responder]) async throws -> Response {
        var all: [Webhook] = []
        for (index, shard) in shards.enumerated() {
            all += try await answer(Webhooks.self, try await shard(request, context)).webhooks.map { webhook in
                var webhook = webhook
                webhook.shard = index
                return webhook
            }
        }
        return try Webhooks(webhooks: all).response(from: request, context: context)
    }

    /// `DELETE /v1/webhooks/{id}`: on every shard; 204 if any shard held it, else a shard's 404.
    /// Every shard that answers deletes it, even while another does not: each one's deletion
    /// stops its deliveries now. Cut short, the answer says what each shard did (`CutShort`), and
    /// a retry finishes it (a shard that has deleted it answers 404: so a retry answers 404 when
    /// the shards that deleted it were the only ones to hold it).
    static func deleteWebhook(_ request: Request, context: LedgerRequestContext, shards: [Responder?]) async throws -> Response {
        var missing: Response?
        let asked = try await askEvery(shards, request, context: context) { response -> Bool? in
            switch response.status {
            case .noContent: return true
            case .notFound:
                missing = missing ?? response
                return false
            default: return nil
            }
        }
        let outcomes = try asked.get()
        guard outcomes.allSatisfy({ $0.done != nil }) else {
            let parts = outcomes.enumerated().map { index, outcome in
                outcome.done.map { CutShort.Part(shard: index, completed: true, deleted: $0) } ?? failedPart(index, outcome.failure!)
            }
            let (done, notDone) = (parts.filter(\.completed).map(\.shard), parts.filter { !$0.completed }.map(\.shard))
            return try cutShort(
                "the webhook's deletion was cut short: done on \(named(done)), not on \(named(notDone)); retry to finish it",
                parts: parts, failures: outcomes.compactMap(\.failure), request: request, context: context)
        }
        return outcomes.contains { $0.done == true } ? Response(status: .noContent) : missing!
    }
}
