import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import Logging
import PostgresNIO

/// The webhooks table as the API sees it: register, list, delete. Who may register for which
/// collaboration is the caller's check (the API checks ownership before `register`).
public struct WebhookRegistry: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// Webhooks one account may hold: each costs a delivery worker's scans of the log.
    public static let limitPerAccount = 50

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// A webhook's id and signing secret, made once (on shards, one registration of every
    /// collaboration an owner owns is made on every shard with the same seed).
    public struct Seed: Sendable {
        public var id = UUID()
        public var secret = WebhookRegistry.newSecret()
        public init() {}
    }

    /// Registers a webhook of the account `subject` (its pseudonym: the table names accounts so)
    /// that delivers the events appended from now on; the answer is the only one that carries its
    /// secret. Nil if the account holds `limitPerAccount` already.
    public func register(subject account: String, url: String, collaborationId: String?, seed: Seed = Seed()) async throws -> Webhook? {
        let (id, secret) = (seed.id, seed.secret)
        let rows = try await client.queryUnlessClosed(
            """
            INSERT INTO ledger_webhooks (id, account, collaboration_id, url, secret, position)
            SELECT \(id), \(account), \(collaborationId), \(url), \(secret), (SELECT position FROM ledger_head)
            WHERE (SELECT count(*) FROM ledger_webhooks WHERE account = \(account)) < \(Self.limitPerAccount)
            RETURNING \(unescaped: Self.columns)
            """, logger: logger
        ) { rows in try await Self.webhooks(rows) }
        return rows.first.map {
            var webhook = $0
            webhook.secret = secret
            return webhook
        }
    }

    /// The account's webhooks, oldest first. The table names an account by its pseudonym only
    /// (registration stores it; migration 0017 converted the rows before), so a caller is matched
    /// through its own pseudonym and never by its raw name, which could be another's pseudonym.
    public func list(account: String) async throws -> [Webhook] {
        try await client.queryUnlessClosed(
            """
            SELECT \(unescaped: Self.columns) FROM ledger_webhooks
            WHERE account = (SELECT s.pseudonym FROM ledger_subjects s WHERE s.account = \(account))
            ORDER BY created_at, id
            """,
            logger: logger
        ) { rows in try await Self.webhooks(rows) }
    }

    /// Deletes the account's webhook (matched as `list` matches); false if it has none with that
    /// id. A delivery in flight may still arrive once.
    public func delete(id: UUID, account: String) async throws -> Bool {
        try await client.queryUnlessClosed(
            """
            DELETE FROM ledger_webhooks
            WHERE id = \(id) AND account = (SELECT s.pseudonym FROM ledger_subjects s WHERE s.account = \(account)) RETURNING id
            """,
            logger: logger
        ) { rows in try await rows.decode(UUID.self).reduce(0) { n, _ in n + 1 } > 0 }
    }

    static let columns =
        "id, url, collaboration_id, created_at, position, failing_since, last_error, next_attempt_at, disabled_at"

    static func webhooks(_ rows: PostgresRowSequence) async throws -> [Webhook] {
        var webhooks: [Webhook] = []
        for try await (id, url, collaborationId, createdAt, position, failingSince, lastError, nextAttemptAt, disabledAt) in rows.decode(
            (UUID, String, String?, Date, Int64, Date?, String?, Date, Date?).self)
        {
            let status = disabledAt != nil ? "disabled" : failingSince != nil ? "failing" : "active"
            webhooks.append(
                Webhook(
                    id: id.uuidString.lowercased(), url: url, collaborationId: collaborationId, createdAt: createdAt,
                    deliveredThrough: position, status: status, failingSince: failingSince, lastError: lastError,
                    nextAttemptAt: status == "failing" ? nextAttemptAt : nil, disabledAt: disabledAt))
        }
        return webhooks
    }

    /// `whsec_` and 32 random bytes, base64url: the receiver's HMAC key is this text's UTF-8.
    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let base64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "whsec_" + base64
    }
}

extension WebhookRegistry {
    /// Refuses a URL deliveries cannot or should not go to: not absolute, not https (http only
    /// with `allowHTTP`, for development and tests), no host, credentials in it (they would
    /// show in every listing), over 2,048 characters; and, unless `allowPrivate`, a host that is
    /// or resolves to a loopback, private, link-local or otherwise non-public address
    /// (`WebhookDestination`; each delivery checks again).
    public static func validate(url: String, allowHTTP: Bool, allowPrivate: Bool) async throws {
        guard url.count <= 2048, let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { throw DomainError.invalid("url must be an absolute URL of at most 2,048 characters", code: .invalidWebhookURL) }
        guard scheme == "https" || (scheme == "http" && allowHTTP) else {
            throw DomainError.invalid(
                allowHTTP ? "url must be https or http" : "url must be https (http only where LEDGER_WEBHOOKS_ALLOW_HTTP is set)",
                code: .invalidWebhookURL)
        }
        guard components.user == nil, components.password == nil else {
            throw DomainError.invalid("url must not carry credentials; check the Ledger-Signature header instead", code: .invalidWebhookURL)
        }
        do {
            _ = try await WebhookDestination.check(url: url, allowPrivate: allowPrivate)
        } catch let refused as WebhookDestination.Refused {
            throw DomainError.invalid(refused.description, code: .invalidWebhookURL)
        }
    }
}
