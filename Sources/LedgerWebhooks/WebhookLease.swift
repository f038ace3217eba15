import Crypto
import Foundation
import LedgerDomain
import LedgerPostgres
import Logging
import PostgresNIO

/// A webhook leased by one delivery worker: where and what to deliver, and from which position.
struct WebhookLease: Sendable {
    var id: UUID
    var account: String
    var collaborationId: String?
    var url: String
    var secret: String
    /// The delivery cursor: every event of the webhook at or below it is delivered.
    var position: Int64

    /// Whether the webhook delivers `recorded`: an event of a collaboration the account owns
    /// (`owner`, from the stream's state: a collaboration's owner never changes), of the named
    /// collaboration if there is one, and that its owner sees on the feed (`FeedAudience`).
    func wants(_ recorded: RecordedEvent, owner: String?) -> Bool {
        guard owner == account, let collaboration = Streams.collaborationId(of: recorded.streamId) else { return false }
        guard collaborationId == nil || collaborationId == collaboration, let event = try? CollaborationEvent(recorded) else {
            return false
        }
        var audience = FeedAudience(account: account, owned: [collaboration])
        return audience.sees(event, in: collaboration)
    }

    /// The `Ledger-Delivery` id of an event: derived from the webhook and the position (on
    /// shards, the shard's and its position), so every attempt at one event carries the same id
    /// and no two events share one.
    func deliveryId(_ position: Int64, shard: Int? = nil) -> UUID {
        Identifiers.derivedUUID("\(id.uuidString.lowercased()):\(shard.map { "shard-\($0):" } ?? "")\(position)")
    }

    /// The statements of the lease's life: claim, deliver (renewing it), fail, give it back.
    /// Every one after the claim checks that this worker still holds the lease.
    struct Queries: Sendable {
        let client: PostgresClient
        let logger: Logger
        let worker: String
        let settings: WebhookDeliverer.Settings

        /// A webhook that is enabled, due, not leased by a live worker, and behind the log; and
        /// whether any webhook is enabled at all.
        func claim() async throws -> (lease: WebhookLease?, any: Bool) {
            try await client.queryUnlessClosed(
                """
                WITH claimed AS (
                    UPDATE ledger_webhooks SET owner = \(worker), lease_until = now() + \(millis(settings.lease)) * interval '1 millisecond'
                    WHERE id = (
                        SELECT id FROM ledger_webhooks
                        WHERE disabled_at IS NULL AND next_attempt_at <= now() AND (owner IS NULL OR lease_until < now())
                          AND position < (SELECT position FROM ledger_head)
                        ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
                    RETURNING id, account, collaboration_id, url, secret, position)
                SELECT c.id, c.account, c.collaboration_id, c.url, c.secret, c.position,
                       EXISTS (SELECT 1 FROM ledger_webhooks WHERE disabled_at IS NULL)
                FROM (SELECT 1) AS one LEFT JOIN claimed c ON true
                """, logger: logger
            ) { rows in
                for try await (id, account, collaborationId, url, secret, position, any) in rows.decode(
                    (UUID?, String?, String?, String?, String?, Int64?, Bool).self)
                {
                    guard let id, let account, let url, let secret, let position else { return (nil, any) }
                    return (
                        WebhookLease(
                            id: id, account: account, collaborationId: collaborationId, url: url, secret: secret, position: position),
                        true
                    )
                }
                return (nil, false)
            }
        }

        /// The owners of the collaborations among `streams`, by stream id.
        func owners(of streams: Set<String>) async throws -> [String: String] {
            try await client.queryUnlessClosed(
                "SELECT stream_id, state::jsonb->>'owner' FROM ledger_streams WHERE stream_id = ANY(\(Array(streams)))",
                logger: logger
            ) { rows in
                var owners: [String: String] = [:]
                for try await (stream, owner) in rows.decode((String, String?).self) { owners[stream] = owner }
                return owners
            }
        }

        /// The event at `position` was answered 2xx: the cursor moves past it, the failure run
        /// ends, the lease is renewed. False if another worker holds the lease now.
        func delivered(_ lease: WebhookLease, through position: Int64) async throws -> Bool {
            try await holding(
                """
                UPDATE ledger_webhooks SET position = \(position), failing_since = NULL, attempts = 0, last_error = NULL,
                       lease_until = now() + \(millis(settings.lease)) * interval '1 millisecond'
                WHERE id = \(lease.id) AND owner = \(worker) RETURNING id
                """)
        }

        /// The event after `position` failed: retry it after the backoff, or disable the
        /// webhook once it has failed for `disableAfter`; the lease is given back.
        func failed(_ lease: WebhookLease, through position: Int64, error: String) async throws {
            _ = try await holding(
                """
                UPDATE ledger_webhooks SET position = \(position), attempts = attempts + 1,
                       failing_since = coalesce(failing_since, now()), last_error = \(error),
                       next_attempt_at = now() + least(\(millis(settings.firstRetry)) * power(2, least(attempts, 30)),
                                                       \(millis(settings.longestRetry))) * interval '1 millisecond',
                       disabled_at = CASE WHEN failing_since <= now() - \(millis(settings.disableAfter)) * interval '1 millisecond'
                                          THEN now() END,
                       owner = NULL, lease_until = NULL
                WHERE id = \(lease.id) AND owner = \(worker) RETURNING id
                """)
        }

        /// Every event through `position` is delivered or not the webhook's; the lease is given back.
        func release(_ lease: WebhookLease, through position: Int64) async throws {
            _ = try await holding(
                """
                UPDATE ledger_webhooks SET position = greatest(position, \(position)), owner = NULL, lease_until = NULL
                WHERE id = \(lease.id) AND owner = \(worker) RETURNING id
                """)
        }

        private func holding(_ query: PostgresQuery) async throws -> Bool {
            try await client.queryUnlessClosed(query, logger: logger) { rows in
                try await rows.decode(UUID.self).reduce(0) { n, _ in n + 1 } > 0
            }
        }

        private func millis(_ duration: Duration) -> Double { duration.seconds * 1000 }
    }
}
