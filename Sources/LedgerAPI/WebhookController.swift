import Foundation
import Hummingbird
import LedgerDomain
import LedgerStore
import LedgerWebhooks
import LedgerWire

/// `POST/GET /v1/webhooks`, `DELETE /v1/webhooks/{id}`: an owner's webhooks. A webhook gets
/// the events of the collaborations its owner owns (or of the one named), delivered by the
/// `WebhookDeliverer` workers; its secret is in the registration's answer only.
struct WebhookController {
    let registry: WebhookRegistry
    let collaborations: CollaborationStreams
    let subjects: Subjects
    let bodyLimit: Int
    /// `LEDGER_WEBHOOKS_ALLOW_HTTP`: plain http URLs accepted (development, tests).
    let allowHTTP: Bool
    /// `LEDGER_WEBHOOKS_ALLOW_PRIVATE`: URLs whose host is or resolves to a loopback, private or
    /// other non-public address accepted (development, tests).
    let allowPrivate: Bool

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.post("webhooks", use: register)
        group.get("webhooks", use: list)
        group.delete("webhooks/:id", use: delete)
    }

    @Sendable func register(_ request: Request, context: LedgerRequestContext) async throws -> EditedResponse<Webhook> {
        let caller = try context.requireCaller()
        let body = try await BodyDecoder.decode(WebhookRequest.self, from: request, context: context, limit: bodyLimit)
        try await WebhookRegistry.validate(url: body.url, allowHTTP: allowHTTP, allowPrivate: allowPrivate)
        // The collaborations' states and the webhooks table name the owner by its pseudonym.
        let subject = try await subjects.pseudonym(for: caller.account)
        if let collaborationId = body.collaborationId {
            guard try await collaborations.current(try Identifiers.collaborationId(collaborationId)).state.owner == subject else {
                throw DomainError(.notOwner, "only the collaboration's owner may register a webhook for it")
            }
        }
        guard
            let webhook = try await registry.register(
                subject: subject, url: body.url, collaborationId: body.collaborationId, seed: context.webhookSeed ?? .init())
        else {
            throw DomainError(.tooManyWebhooks, "an account may hold \(WebhookRegistry.limitPerAccount) webhooks; delete one first")
        }
        return EditedResponse(status: .created, response: webhook)
    }

    @Sendable func list(_ request: Request, context: LedgerRequestContext) async throws -> Webhooks {
        Webhooks(webhooks: try await registry.list(account: try context.requireCaller().account))
    }

    @Sendable func delete(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        guard let id = UUID(uuidString: try context.parameters.require("id")),
            try await registry.delete(id: id, account: caller.account)
        else { throw DomainError.notFound("webhook") }
        return Response(status: .noContent)
    }
}
