import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import Logging
import NIOCore
import PostgresNIO
import TransparencyLog

/// The durable side of proofs: challenges, requests stored for the verifier workers (`ledger
/// api`), their status, and waiting for a verdict.
public struct ProofRequests: Sendable {
    let client: PostgresClient
    let logger: Logger
    public var challengeLifetime: TimeInterval

    public init(client: PostgresClient, logger: Logger, challengeLifetime: TimeInterval = 120) {
        self.client = client
        self.logger = logger
        self.challengeLifetime = challengeLifetime
    }

    public struct Challenge: Sendable, Equatable {
        public var challengeId: UUID
        public var challenge: [UInt8]
        public var expiresAt: Date
    }

    /// 32 random bytes bound to the account (by its pseudonym) and collaboration, single use,
    /// expiring on the database's clock (SPEC "One clock"). One round trip
    /// (`ledger_issue_challenge`): the collaboration's existence, the insert and the commit, which
    /// comes before the answer. Throws `collaborationNotFound` when it does not exist.
    public func issueChallenge(collaborationId: String, account: String) async throws -> Challenge {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let challengeId = UUID()
        let micros = try await client.queryUnlessClosed(
            """
            CALL ledger_issue_challenge(\(challengeId), \(collaborationId), \(account), \(ByteBuffer(bytes: bytes)), \(challengeLifetime))
            """, logger: logger
        ) { rows -> Int64? in
            for try await micros in rows.decode(Int64?.self) { return micros }
            throw DomainError(.notReady, "the challenge was not stored")
        }
        guard let micros else { throw DomainError.collaborationNotFound }
        return Challenge(challengeId: challengeId, challenge: bytes, expiresAt: RecordedTime.date(micros: micros))
    }

    /// Stores a request for the verifier workers, under its account's pseudonym, and tells them
    /// (the NOTIFY is delivered at commit); answered after the commit, so the caller may promise
    /// its id. Refused with 429,
    /// nothing stored, while the account's rejections in the window have reached `limit` (the
    /// commit checks again, atomically: this spares the table a flood).
    public func store(_ submission: ProofSubmission, limit: Int, window: Duration) async throws {
        let proof = submission.proof
        let retryAfter = try await client.transaction(logger: logger) { connection -> Int? in
            let rows = try await connection.queryUnlessClosed(
                """
                WITH subject AS MATERIALIZED (SELECT ledger_subject(\(submission.account)) AS pseudonym),
                recent AS (
                    SELECT count(*) AS n, min(recorded_at) AS oldest FROM ledger_events, subject
                    WHERE event_type = 'ProofRejected' AND data->>'account' = subject.pseudonym
                      AND recorded_at > now() - \(window.seconds) * interval '1 second'
                ), stored AS (
                    INSERT INTO ledger_proof_requests
                        (request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes)
                    SELECT \(submission.requestId), \(submission.collaborationId), subject.pseudonym, \(submission.challengeId),
                           \(ByteBuffer(bytes: submission.signature)), \(ByteBuffer(bytes: proof.publicKey)), \(Int64(proof.publicKeyIndex)),
                           \(proof.inclusionHashes.map { ByteBuffer(bytes: $0) })::bytea[]
                    FROM recent, subject WHERE recent.n < \(Int64(limit))
                    RETURNING request_id)
                SELECT (SELECT count(*) FROM (SELECT pg_notify(\(VerifierChannels.requests), request_id::text) FROM stored) n),
                       greatest(1, ceil(extract(epoch FROM coalesce(oldest + \(window.seconds) * interval '1 second' - now(),
                                                                    interval '1 second'))))::int4
                FROM recent
                """, logger: logger)
            for try await (stored, retryAfter) in rows.decode((Int64, Int32).self) { return stored == 1 ? nil : Int(retryAfter) }
            return 1
        }
        if let retryAfter {
            throw DomainError(
                .tooManyRejections, "too many rejected proofs from this account; retry after \(retryAfter) s", retryAfter: retryAfter)
        }
    }

    /// Stored requests waiting for a verdict, oldest first (those of erased accounts too: the
    /// engine refuses them, `ProofEngine.refuseErased`).
    public func pending(limit: Int) async throws -> [ProofSubmission] {
        try await client.queryUnlessClosed(
            """
            SELECT request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes
            FROM ledger_proof_requests WHERE status = 'pending' ORDER BY created_at LIMIT \(Int64(limit))
            """, logger: logger
        ) { rows in
            var pending: [ProofSubmission] = []
            for try await (id, collaboration, account, challengeId, signature, publicKey, index, hashes) in rows.decode(
                (UUID, String, String, UUID, ByteBuffer, ByteBuffer, Int64, [ByteBuffer]).self)
            {
                pending.append(
                    ProofSubmission(
                        requestId: id, collaborationId: collaboration, account: account, challengeId: challengeId,
                        signature: Array(buffer: signature),
                        proof: IdentityProof(
                            publicKey: Array(buffer: publicKey), publicKeyIndex: UInt64(index),
                            inclusionHashes: hashes.map { Array(buffer: $0) })))
            }
            return pending
        }
    }

    /// Requests waiting for a verdict (the proof queue depth).
    public func pendingCount() async throws -> Int {
        try await client.queryUnlessClosed("SELECT count(*) FROM ledger_proof_requests WHERE status = 'pending'", logger: logger) { rows in
            for try await n in rows.decode(Int64.self) { return Int(n) }
            return 0
        }
    }

    /// The request's verdict, or `.pending`; nil for a request unknown to this account (whose
    /// pseudonym, or plaintext before pseudonyms, it names). A request the throttle refused
    /// throws 429. A request whose account was erased before its verdict names a pseudonym
    /// nothing links to the caller any more: while pending or refused (`account_erased`) it is
    /// answered to whoever names its id, which only its submitter was told (a random UUID).
    public func status(requestId: UUID, account: String) async throws -> Verdict? {
        try await client.queryUnlessClosed(
            """
            SELECT q.status, q.reason, q.root_hash, q.decided_position FROM ledger_proof_requests q
            WHERE q.request_id = \(requestId)
              AND (q.account = ANY(ledger_account_names(\(account)))
                   OR (q.status IN ('pending', 'refused') AND NOT EXISTS (SELECT 1 FROM ledger_subjects s WHERE s.pseudonym = q.account)))
            """, logger: logger
        ) { rows in
            for try await (status, reason, rootHash, position) in rows.decode((String, String?, ByteBuffer?, Int64?).self) {
                switch status {
                case "granted":
                    return .granted(rootHash: Base64.encode(Array(buffer: rootHash!)), account: account, position: position!)
                case "rejected":
                    let reason = try Verdict.reason(recorded: reason)
                    return .rejected(reason: reason, message: reason.message, position: position)
                case "throttled":
                    throw DomainError(
                        .tooManyRejections, "too many rejected proofs from this account; submit it again later", retryAfter: 60)
                case "refused":
                    // Decided without an event: so far only for an account erased before its verdict.
                    let reason = try Verdict.reason(recorded: reason ?? ProofRefusalReason.accountErased.rawValue)
                    return .rejected(reason: reason, message: reason.message, position: nil)
                default:
                    return .pending(requestId: requestId)
                }
            }
            return nil
        }
    }

    /// Waits up to `timeout` for a verdict, woken by the verdict NOTIFY (and re-checking every
    /// 500 ms in case one was missed while the LISTEN connection was down).
    public func awaitVerdict(requestId: UUID, account: String, verdicts: NotificationHub, timeout: Duration) async throws -> Verdict {
        let subscription = verdicts.register(payload: requestId.uuidString.lowercased())
        defer { subscription.cancel() }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let verdict = try await status(requestId: requestId, account: account), verdict != .pending(requestId: requestId) {
                return verdict
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .pending(requestId: requestId) }
            await subscription.wait(timeout: min(left, .milliseconds(500)))
        }
    }
}
