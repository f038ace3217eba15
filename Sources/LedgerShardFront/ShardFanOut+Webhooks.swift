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
    /// the same id and secret (`LedgerRequestContext.webhookSeed`). A shard's refusal is the
    /// answer, and the shards that may hold it delete it again, so a retry makes one webhook.
    /// The answer is the first shard's registration (`shard` 0), with the secret.
    static func registerWebhook(
        _ request: Request, body: ByteBuffer, context: LedgerRequestContext, shards: [Responder]
    ) async throws -> Response {
        var context = context
        context.webhookSeed = .init()
        var asked = 0
        var first: Webhook?
        do {
            for shard in shards {
                asked += 1
                let response = try await shard(Request(head: request.head, body: RequestBody(buffer: body)), context)
                let webhook = try await answer(Webhook.self, response, status: .created)
                if first == nil { first = webhook }
            }
        } catch {
            // Every shard that registered it, and the failing one unless it refused (a 4xx: it
            // committed nothing; a 5xx or a lost answer may follow a commit). The id is this
            // registration's alone, and a deletion is the caller's own.
            if let refusal = error as? Refusal, refusal.response.status.code < 500 { asked -= 1 }
            var head = request.head
            (head.method, head.path) = (.delete, "/v1/webhooks/\(context.webhookSeed!.id.uuidString.lowercased())")
            for index in 0..<asked {
                let undone = try? await shards[index](Request(head: head, body: RequestBody(buffer: ByteBuffer())), context)
                if undone.map({ [.noContent, .notFound].contains($0.status) }) != true {
                    context.logger.error(
                        "a webhook registration refused by a shard may be left on shard \(index); delete it",
                        metadata: ["webhook": "\(context.webhookSeed!.id)"])
                }
            }
            throw error
        }
        first!.shard = 0
        return try EditedResponse(status: .created, response: first!).response(from: request, context: context)
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
    static func deleteWebhook(_ request: Request, context: LedgerRequestContext, shards: [Responder]) async throws -> Response {
        var (deleted, missing): (Bool, Response?) = (false, nil)
        for shard in shards {
            let response = try await shard(Request(head: request.head, body: RequestBody(buffer: ByteBuffer())), context)
            switch response.status {
            case .noContent: deleted = true
            case .notFound: missing = missing ?? response
            default: throw Refusal(response: response)
            }
        }
        return deleted ? Response(status: .noContent) : missing!
    }
}
