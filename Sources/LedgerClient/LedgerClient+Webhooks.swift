import Foundation

// Webhooks: for an app's backend, which registers a URL and gets each event of the
// collaborations it owns as a signed POST. The receiver checks each delivery with
// `WebhookSignature.verify(_:body:secret:)` before trusting it.
extension LedgerClient {
    /// Registers `url` for the events of `collaborationID` (owner only), or of every
    /// collaboration the account owns if nil. The answer's `secret` is shown this once: keep it.
    public func registerWebhook(url: String, collaborationID: String? = nil) async throws -> Webhook {
        try await send("POST", "/v1/webhooks", body: WebhookRequest(url: url, collaborationId: collaborationID))
    }

    /// The account's webhooks and how their deliveries go (status, last error).
    public func webhooks() async throws -> [Webhook] {
        let answer: Webhooks = try await send("GET", "/v1/webhooks")
        return answer.webhooks
    }

    public func deleteWebhook(_ id: String) async throws {
        _ = try await exchange("DELETE", "/v1/webhooks/\(try Self.segment(id))")
    }
}
