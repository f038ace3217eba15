import Foundation
import HTTPTypes
import LedgerDomain
import LedgerPostgres
import Logging
import PostgresNIO

/// Bounds how many rejected proofs one account can have recorded per window, so a flood cannot
/// grow the log without bound. Counted in the database (migration 0015), so every API instance
/// of it shares one count: the account's rejections in the log, plus the submissions still
/// being decided (claims), checked and claimed in one atomic step per account.
public struct RejectionThrottle: Sendable {
    let client: PostgresClient
    let logger: Logger
    let limit: Int
    let window: Duration
    /// A claim older than this is taken for the leftover of a process that died.
    let claimLife: Duration = .seconds(120)

    public init(client: PostgresClient, logger: Logger, limit: Int = 20, window: Duration = .seconds(60)) {
        self.client = client
        self.logger = logger
        self.limit = limit
        self.window = window
    }

    /// Runs `decide` under a claim named `claim` (the proof request's id: the claim is spent when
    /// that request is decided), or refuses with 429 `too_many_rejections` and `Retry-After`.
    func claiming<T: Sendable>(_ account: String, claim: UUID, _ decide: () async throws -> T) async throws -> T {
        let (allowed, retryAfter) = try await client.queryUnlessClosed(
            """
            SELECT allowed, retry_after FROM ledger_claim_proof_slot(
                \(account), \(limit)::int, \(window.seconds) * interval '1 second', \(claimLife.seconds) * interval '1 second', \(claim))
            """, logger: logger
        ) { rows in
            for try await row in rows.decode((Bool, Int32).self) { return row }
            return (false, Int32(1))
        }
        guard allowed else {
            throw APIError(
                .tooManyRequests, "too_many_rejections", "too many rejected proofs from this account; retry after \(retryAfter) s",
                headers: [.retryAfter: "\(retryAfter)"])
        }
        do {
            return try await decide()
        } catch {
            // No verdict (a 404, the database gone): the claim would otherwise count until it lapses.
            try? await client.executeUnlessClosed("DELETE FROM ledger_throttle_claims WHERE id = \(claim)", logger: logger)
            throw error
        }
    }

}
